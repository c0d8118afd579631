# Times robustbase::ltsReg with its defaults on one problem written by
# bench_lts.py (x.f64: n x p column-major doubles, y.f64: n doubles) and
# prints one line: seconds, then the raw coefficients (intercept first).
#   Rscript bench/lts_ltsreg.R DIR N P
suppressPackageStartupMessages(library(robustbase))
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]; n <- as.integer(args[2]); p <- as.integer(args[3])
x <- matrix(readBin(file.path(dir, "x.f64"), "double", n * p, size = 8), n, p)
y <- readBin(file.path(dir, "y.f64"), "double", n, size = 8)
set.seed(1)
elapsed <- system.time(fit <- ltsReg(x, y))[["elapsed"]]
cat(sprintf("%.6f", elapsed), sprintf("%.17g", fit$raw.coefficients), "\n")
