# Reference EM for mixtures of inverse Gaussian distributions (statgpu_igmm)
# in R, with statmod's densities (Debian 12: apt-get install r-cran-statmod;
# statmod 1.5.0 wrote the files).
#
#   Rscript tests/reference/igmm_reference.R
#
# Writes, next to itself:
#   igmm_data.csv  three simulated data sets (set, value): a two-component
#                  mixture of 2,000 observations, a three-component one of
#                  3,000, a single inverse Gaussian of 500 (set.seed(20261124))
#   igmm_r.csv     for each data set (case, quantity, values): the given start
#                  (alpha, mu, lambda), the log-likelihood after t = 1 .. 15
#                  iterations ("loglik": the log-likelihood of the parameters
#                  after t M-steps), the parameters after 15 iterations, and
#                  with the defaults (tolerance 1e-6 on the absolute change,
#                  at most 100 iterations) the iterations to converge and the
#                  final log-likelihood.
# The updates are statgpu's (statgpu.h): log-space densities (dinvgauss(...,
# log = TRUE)), responsibilities through log-sum-exp, the exact M-step
# (mu = sum(r x) / W, then lambda = W / (sum(r / x) - W / mu) with the new mu).
# The engine test (tests/test_igmm.c) reads only these files.
suppressPackageStartupMessages(library(statmod))

here <- local({
  args <- commandArgs(trailingOnly = FALSE)
  file <- sub("^--file=", "", args[grep("^--file=", args)])
  if (length(file) == 1) dirname(normalizePath(file)) else "tests/reference"
})

set.seed(20261124)
simulate <- function(n, alpha, mu, lambda) {
  component <- sample(seq_along(alpha), n, replace = TRUE, prob = alpha)
  rinvgauss(n, mean = mu[component], shape = lambda[component])
}
sets <- list(
  two = simulate(2000, c(0.4, 0.6), c(0.5, 2.0), c(2.0, 8.0)),
  three = simulate(3000, c(0.3, 0.3, 0.4), c(0.3, 1.0, 3.0), c(1.5, 4.0, 20.0)),
  one = simulate(500, 1, 1.5, 3.0))
starts <- list(
  two = list(alpha = c(0.5, 0.5), mu = c(0.8, 1.5), lambda = c(1.0, 1.0)),
  three = list(alpha = c(1, 1, 1) / 3, mu = c(0.5, 1.2, 2.0), lambda = c(2.0, 2.0, 2.0)),
  one = list(alpha = 1, mu = 1.0, lambda = 1.0))

loglik_and_resp <- function(x, p) {
  logs <- sapply(seq_along(p$alpha), function(j)
    log(p$alpha[j]) + dinvgauss(x, mean = p$mu[j], shape = p$lambda[j], log = TRUE))
  logs <- matrix(logs, nrow = length(x))
  largest <- apply(logs, 1, max)
  lse <- largest + log(rowSums(exp(logs - largest)))
  list(loglik = sum(lse), resp = exp(logs - lse))
}
m_step <- function(x, resp) {
  w <- colSums(resp)
  mu <- colSums(resp * x) / w
  lambda <- w / (colSums(resp / x) - w / mu)
  list(alpha = w / sum(w), mu = mu, lambda = lambda)
}
run <- function(x, p, iterations) {
  for (t in seq_len(iterations)) p <- m_step(x, loglik_and_resp(x, p)$resp)
  p
}

number <- function(x) trimws(formatC(x, digits = 17, format = "g"))
numbers <- function(x) paste(vapply(x, number, ""), collapse = " ")
rows <- list()
add <- function(case, quantity, values) rows[[length(rows) + 1]] <<- data.frame(case = case, quantity = quantity,
                                                                              values = numbers(values))
for (case in names(sets)) {
  x <- sets[[case]]
  p0 <- starts[[case]]
  add(case, "alpha_init", p0$alpha)
  add(case, "mu_init", p0$mu)
  add(case, "lambda_init", p0$lambda)
  add(case, "loglik", vapply(1:15, function(t) loglik_and_resp(x, run(x, p0, t))$loglik, 0))
  p15 <- run(x, p0, 15)
  add(case, "alpha", p15$alpha)
  add(case, "mu", p15$mu)
  add(case, "lambda", p15$lambda)
  # The defaults: stop when an E-step's log-likelihood moved by less than 1e-6.
  p <- p0
  previous <- -Inf
  iterations <- 0
  repeat {
    current <- loglik_and_resp(x, p)
    if (iterations > 0 && abs(current$loglik - previous) < 1e-6) break
    if (iterations == 100) break
    previous <- current$loglik
    p <- m_step(x, current$resp)
    iterations <- iterations + 1
  }
  add(case, "converged_iterations", iterations)
  add(case, "converged_loglik", current$loglik)
}
write.csv(do.call(rbind, rows), file.path(here, "igmm_r.csv"), row.names = FALSE, quote = TRUE)
data <- do.call(rbind, lapply(names(sets), function(case) data.frame(set = case, value = sets[[case]])))
data$value <- vapply(data$value, number, "")
write.csv(data, file.path(here, "igmm_data.csv"), row.names = FALSE, quote = FALSE)
