# Reference optima of Gaussian mixtures for statgpu's GMM from R's mclust
# (Debian 12: apt-get install r-cran-mclust; mclust 6.0.0 wrote the file).
#
#   Rscript tests/reference/gmm_mclust.R
#
# Writes gmm_mclust.csv next to itself: for Old Faithful and iris, the models
# that are scikit-learn's (and statgpu's) covariance types, in mclust's names
#   VVV = full, EEE = tied, VVI = diag, VII = spherical,
# each run by mclust's EM from its own (hierarchical) start to a relative
# change of the log-likelihood below 1e-12, so that what is written is the
# optimum itself and not a point near it:
#   data, model, G, n, loglik, df, bic (mclust's sign: 2 loglik - df ln n,
#   higher is better), and the parameters: weights (G), means (G x d,
#   component by component), covariances (G blocks of d x d, row by row).
# mclust adds nothing to the covariances (statgpu's reg_covar = 0 compares).
# The engine test (tests/test_gmm.c) and the CLI test read only this file.
suppressPackageStartupMessages(library(mclust))

here <- local({
  args <- commandArgs(trailingOnly = FALSE)
  file <- sub("^--file=", "", args[grep("^--file=", args)])
  if (length(file) == 1) dirname(normalizePath(file)) else "tests/reference"
})
data_sets <- list(
  faithful = read.csv(file.path(here, "faithful.csv")),
  iris = read.csv(file.path(here, "iris.csv")))
cases <- list(
  list("faithful", "VVV", 2), list("faithful", "VVV", 3), list("faithful", "EEE", 3),
  list("faithful", "VVI", 2), list("faithful", "VII", 3),
  list("iris", "VVV", 2), list("iris", "VVV", 3), list("iris", "EEE", 3),
  list("iris", "VVI", 3), list("iris", "VII", 4))

control <- emControl(tol = c(1e-12, sqrt(.Machine$double.eps)), itmax = c(.Machine$integer.max, 1e6))
number <- function(x) formatC(x, digits = 17, format = "g")
numbers <- function(x) paste(trimws(vapply(x, number, "")), collapse = " ")
rows <- lapply(cases, function(case) {
  x <- data_sets[[case[[1]]]]
  fit <- Mclust(x, G = case[[3]], modelNames = case[[2]], control = control, verbose = FALSE)
  d <- ncol(x)
  g <- fit$G
  sigma <- fit$parameters$variance$sigma
  covariances <- unlist(lapply(seq_len(g), function(j) t(sigma[, , j])))
  data.frame(data = case[[1]], model = case[[2]], G = g, n = fit$n, loglik = trimws(number(fit$loglik)),
             df = fit$df, bic = trimws(number(fit$bic)), weights = numbers(fit$parameters$pro),
             means = numbers(fit$parameters$mean), covariances = numbers(covariances))
})
write.csv(do.call(rbind, rows), file.path(here, "gmm_mclust.csv"), row.names = FALSE, quote = TRUE)
