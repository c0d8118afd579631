# Writes lts_large_r.csv: robustbase::ltsReg's raw coefficients (default
# settings, set.seed(1), alpha 0.75) on synthetic data sets of 8000-20000
# rows for test_lts_large.c. The data are not committed: both sides
# generate them from the same formula (a Park-Miller generator, Box-Muller
# normals), so the C test recomputes ltsReg's objective on its own copy.
#     Rscript lts_large_reference.R [OUTPUT_DIR]
suppressPackageStartupMessages(library(robustbase))

# The data set (n rows, p predictors) of a kind: 0 clean, 1 vertical
# outliers, 2 bad leverage points (20% each), 3 t(2) errors.
lts_large_data <- function(n, p, kind, seed) {
    state <- seed
    uniform <- function() {
        state <<- (16807 * state) %% 2147483647
        state / 2147483647
    }
    normal <- function() {
        u1 <- uniform(); u2 <- uniform()
        sqrt(-2 * log(u1)) * cos(2 * pi * u2)
    }
    x <- matrix(0, n, p)
    for (j in seq_len(p)) for (i in seq_len(n)) x[i, j] <- normal()
    e <- numeric(n)
    for (i in seq_len(n)) {
        e[i] <- normal()
        if (kind == 3) { a <- normal(); b <- normal(); e[i] <- e[i] / sqrt((a * a + b * b) / 2) }
    }
    y <- 1 + drop(x %*% seq_len(p)) + e
    m <- floor(0.2 * n)
    if (kind == 1) for (i in seq_len(m)) y[i] <- y[i] + 50 + normal()
    if (kind == 2) for (i in seq_len(m)) { x[i, 1] <- x[i, 1] + 10; y[i] <- normal() }
    list(x = x, y = y)
}

# The cases: each ended above ltsReg's objective with the CPU's subsample
# search before it carried more candidates.
cases <- read.csv(text = "
n,p,kind,seed
10000,6,0,32
12000,2,1,67
10000,2,2,112
15000,4,3,110
", strip.white = TRUE)

if (sys.nframe() == 0) {
    args <- commandArgs(trailingOnly = TRUE)
    out_dir <- if (length(args) > 0) args[1] else "."
    rows <- lapply(seq_len(nrow(cases)), function(k) {
        c <- cases[k, ]
        d <- lts_large_data(c$n, c$p, c$kind, c$seed)
        set.seed(1)
        fit <- ltsReg(d$x, d$y, alpha = 0.75)
        coef <- fit$raw.coefficients
        sprintf("%d,%d,%d,%d,%s", c$n, c$p, c$kind, c$seed,
                paste(sprintf("%.17g", coef), collapse = ";"))
    })
    writeLines(c("n,p,kind,seed,raw_coefficients", unlist(rows)), file.path(out_dir, "lts_large_r.csv"))
}
