# The leaps peer of bench/bench_bestsubset.py: leaps::regsubsets, exhaustive,
# on one case written by the benchmark, timed inside R around the
# regsubsets call only (reading the data and the summary not counted).
#
#   Rscript bench/bestsubset_leaps.R DIR N P NBEST [NVMAX]
#
# DIR holds x.f64 (N x P doubles, column-major, little-endian) and y.f64 (N
# doubles), the very values statgpu is given. regsubsets(x, y, method =
# "exhaustive", nbest = NBEST, nvmax = NVMAX (default P), really.big = TRUE),
# with an intercept. Writes DIR/leaps.csv: size, rank, rss and which (P
# characters, 1 where the predictor is in, in the columns' order), one row
# per subset as summary() lists them; prints one line: the elapsed seconds
# (proc.time).
suppressPackageStartupMessages(library(leaps))

arguments <- commandArgs(trailingOnly = TRUE)
if (!length(arguments) %in% 4:5) stop("usage: Rscript bestsubset_leaps.R DIR N P NBEST [NVMAX]")
dir <- arguments[1]
n <- as.integer(arguments[2]); p <- as.integer(arguments[3]); nbest <- as.integer(arguments[4])
nvmax <- if (length(arguments) == 5) as.integer(arguments[5]) else p
x <- matrix(readBin(file.path(dir, "x.f64"), "double", n * p, size = 8, endian = "little"), n, p)
y <- readBin(file.path(dir, "y.f64"), "double", n, size = 8, endian = "little")
if (length(x) != n * p || length(y) != n) stop("x.f64 or y.f64 is shorter than N x P, N")
colnames(x) <- paste0("x", seq_len(p))

elapsed <- system.time(
  fit <- regsubsets(x, y, method = "exhaustive", nbest = nbest, nvmax = nvmax, really.big = TRUE)
)[["elapsed"]]

s <- summary(fit)
which <- s$which[, colnames(x), drop = FALSE]   # the intercept's column left out
size <- rowSums(which)
rank <- ave(size, size, FUN = seq_along)
write.csv(data.frame(size = size, rank = rank, rss = sprintf("%.17g", s$rss),
                     which = apply(which, 1, function(row) paste0(as.integer(row), collapse = ""))),
          file.path(dir, "leaps.csv"), row.names = FALSE, quote = FALSE)
cat(sprintf("%.6f\n", elapsed))
