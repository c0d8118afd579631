# The R peer of bench/bench_igmm.py: the reference EM for mixtures of inverse
# Gaussians (tests/reference/igmm_reference.R's loglik_and_resp and m_step:
# statmod's dinvgauss in log space, log-sum-exp responsibilities, the exact
# M-step), run fit by fit, one data set after another, as bulkem's pure R
# does. The two functions are read from the test's script, not copied, so the
# benchmark times the very EM the engine's tests compare against.
#
#   Rscript bench/igmm_reference.R DATA SET_COUNT LENGTH STARTS ITERATIONS OUT
#
# DATA: SET_COUNT x LENGTH float64 values, little-endian, a data set after
# another. STARTS: a CSV file without header, a start a row (k weights, k
# means, k shapes); every data set is fitted from every start. Each fit does
# ITERATIONS E- and M-steps (no tolerance) and a final E-step whose
# log-likelihood it reports. OUT: a CSV file (set, start, loglik, seconds),
# 1-based; seconds are proc.time()'s elapsed time around the fit (reading and
# writing the files not counted).
suppressPackageStartupMessages(library(statmod))

arguments <- commandArgs(trailingOnly = TRUE)
if (length(arguments) != 6)
  stop("usage: Rscript igmm_reference.R DATA SET_COUNT LENGTH STARTS ITERATIONS OUT")
script <- sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE))
reference <- file.path(dirname(normalizePath(script)), "..", "tests", "reference", "igmm_reference.R")
for (expression in parse(reference)) {
  if (is.call(expression) && identical(expression[[1]], as.name("<-")) && is.name(expression[[2]])
      && as.character(expression[[2]]) %in% c("loglik_and_resp", "m_step"))
    eval(expression)
}
if (!exists("loglik_and_resp") || !exists("m_step"))
  stop("tests/reference/igmm_reference.R no longer defines loglik_and_resp and m_step")

set_count <- as.integer(arguments[2])
length_each <- as.integer(arguments[3])
iterations <- as.integer(arguments[5])
data <- readBin(arguments[1], "double", n = set_count * length_each, size = 8, endian = "little")
if (length(data) != set_count * length_each)
  stop("DATA holds ", length(data), " values, not ", set_count * length_each)
starts <- as.matrix(read.csv(arguments[4], header = FALSE))
k <- ncol(starts) / 3

fit <- function(x, p) {
  for (t in seq_len(iterations)) p <- m_step(x, loglik_and_resp(x, p)$resp)
  loglik_and_resp(x, p)$loglik
}
rows <- vector("list", set_count * nrow(starts))
for (set in seq_len(set_count)) {
  x <- data[(set - 1) * length_each + seq_len(length_each)]
  for (start in seq_len(nrow(starts))) {
    p <- list(alpha = unname(starts[start, 1:k]), mu = unname(starts[start, k + 1:k]),
              lambda = unname(starts[start, 2 * k + 1:k]))
    begin <- proc.time()[["elapsed"]]
    loglik <- fit(x, p)
    seconds <- proc.time()[["elapsed"]] - begin
    rows[[(set - 1) * nrow(starts) + start]] <- data.frame(set = set, start = start, loglik = loglik,
                                                           seconds = seconds)
  }
}
out <- do.call(rbind, rows)
out$loglik <- formatC(out$loglik, digits = 17, format = "g")
write.csv(out, arguments[6], row.names = FALSE, quote = FALSE)
cat(sprintf("%s, statmod %s\n", R.version.string, as.character(packageVersion("statmod"))))
