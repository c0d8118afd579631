# bestsubset_leaps.R: reference values for statgpu's best subset regression
# (statgpu_bestsubset) from R's leaps::regsubsets (method "exhaustive") on
# classic regression data sets of R's datasets package and one simulated set.
#
# Re-run from the repository root (Debian's r-base-core and r-cran-leaps) with
#     Rscript tests/reference/bestsubset_leaps.R
# It writes, next to itself:
#   bestsubset_<data set>.csv  the data: a header line, the response first,
#                              then the predictors, numbers as %.17g
#   bestsubset_leaps.csv       a line per case and quantity:
#                              case,quantity,values (values space-separated,
#                              numbers as %.17g)
# The engine test (tests/test_bestsubset_reference.c) needs only these
# committed files, not R.
#
# The quantities of a case, in this order:
#   data        the data set's name (bestsubset_<name>.csv)
#   options     nbest, intercept (0/1)
#   force       per predictor 1 (force.in) or 0
#   subset      one line per row of summary(regsubsets(...)), in leaps's
#               order: leaps's size label (its predictors, forced ones
#               included, the intercept not), the rank within the size
#               (1 .. nbest), the 0/1 of each predictor (the data's order),
#               rss, rsq, adjr2, cp, bic
#   press       per size leaps reports: size, then the PRESS of its rank-1
#               subset, sum((residual / (1 - hat))^2) of its lm fit
#   chosen      the 0/1 of each predictor of the lowest-Cp model (Cp as
#               leaps's summary defines it) among the rank-1 subsets of every
#               size, the forced-only model included where predictors are
#               forced in (leaps does not report it; statgpu does)
#   coefficients, standard_errors
#               summary(lm(...))'s of the chosen model: the intercept first
#               (where there is one), then its predictors in the data's order
library(leaps)

here <- local({
    file_argument <- grep("^--file=", commandArgs(FALSE), value = TRUE)
    if (length(file_argument)) dirname(normalizePath(sub("^--file=", "", file_argument[1]))) else "."
})

number <- function(x) sprintf("%.17g", x)

# The simulated set: n = 500, p = 20 correlated normal predictors (each the
# sum of its own normal and half the previous one's), 5 nonzero effects.
simulated <- local({
    set.seed(20240611)
    n <- 500; p <- 20
    z <- matrix(rnorm(n * (p + 1)), n, p + 1)
    x <- z[, -1] + 0.5 * z[, -(p + 1)]
    colnames(x) <- paste0("x", 1:p)
    beta <- numeric(p)
    beta[c(2, 5, 9, 14, 18)] <- c(1.5, -1, 0.75, 0.5, -0.3)
    y <- as.vector(2 + x %*% beta + rnorm(n))
    data.frame(y = y, x)
})

# Response first, then predictors.
data_sets <- list(
    swiss     = datasets::swiss,
    mtcars    = datasets::mtcars,
    longley   = datasets::longley[, c(7, 1:6)],
    stackloss = datasets::stackloss[, c(4, 1:3)],
    simulated = simulated
)

for (name in names(data_sets)) {
    d <- data_sets[[name]]
    text <- c(paste(names(d), collapse = ","),
              apply(as.matrix(d), 1, function(row) paste(number(row), collapse = ",")))
    writeLines(text, file.path(here, paste0("bestsubset_", name, ".csv")))
}

# Cases: name, data set, nbest, intercept, predictors forced in.
cases <- list(
    list("swiss", "swiss", 3, TRUE, character(0)),
    list("mtcars", "mtcars", 3, TRUE, character(0)),
    list("longley", "longley", 3, TRUE, character(0)),
    list("mtcars_noint", "mtcars", 3, FALSE, character(0)),
    list("mtcars_force_wt", "mtcars", 3, TRUE, "wt"),
    list("stackloss", "stackloss", 3, TRUE, character(0)),
    list("simulated", "simulated", 2, TRUE, character(0))
)

lines <- "case,quantity,values"
emit <- function(case, quantity, values)
    lines <<- c(lines, paste(case, quantity, paste(values, collapse = " "), sep = ","))

# The lm fit of y on the predictors selected by the logical vector in.
subset_fit <- function(y, x, inside, intercept) {
    xs <- x[, inside, drop = FALSE]
    if (intercept) lm(y ~ xs) else lm(y ~ xs - 1)
}

press <- function(fit) sum((residuals(fit) / (1 - hatvalues(fit)))^2)

for (case in cases) {
    id <- case[[1]]; d <- data_sets[[case[[2]]]]; nbest <- case[[3]]
    intercept <- case[[4]]; forced <- case[[5]]
    y <- d[[1]]
    x <- as.matrix(d[, -1])
    names_x <- colnames(x)
    p <- ncol(x); n <- nrow(x)
    fit <- regsubsets(x = x, y = y, method = "exhaustive", nvmax = p, nbest = nbest,
                      intercept = intercept, force.in = if (length(forced)) forced else NULL,
                      really.big = TRUE)
    s <- summary(fit, matrix.logical = TRUE)
    # leaps moves forced predictors first: its columns are matched by name.
    which <- s$which[, names_x, drop = FALSE]
    sizes <- as.integer(rownames(s$which))
    ranks <- ave(sizes, sizes, FUN = seq_along)
    stopifnot(all(rowSums(which) == sizes))  # leaps's sizes count forced predictors

    emit(id, "data", case[[2]])
    emit(id, "options", c(nbest, as.integer(intercept)))
    emit(id, "force", as.integer(names_x %in% forced))
    for (r in seq_along(sizes))
        emit(id, "subset", c(sizes[r], ranks[r], as.integer(which[r, ]),
                             number(c(s$rss[r], s$rsq[r], s$adjr2[r], s$cp[r], s$bic[r]))))

    # PRESS of each size's rank-1 subset, by the leave-one-out identity.
    best <- which(ranks == 1)
    for (r in best)
        emit(id, "press", c(sizes[r], number(press(subset_fit(y, x, which[r, ], intercept)))))

    # The lowest-Cp model, with leaps's sigma^2 (the full model's).
    full <- subset_fit(y, x, rep(TRUE, p), intercept)
    sigma2 <- deviance(full) / df.residual(full)
    candidates <- which[best, , drop = FALSE]
    if (length(forced))
        candidates <- rbind(names_x %in% forced, candidates)
    cp <- apply(candidates, 1, function(inside) {
        k <- sum(inside) + intercept
        deviance(subset_fit(y, x, inside, intercept)) / sigma2 - (n - 2 * k)
    })
    chosen <- candidates[which.min(cp), ]
    coefficients <- summary(subset_fit(y, x, chosen, intercept))$coefficients
    emit(id, "chosen", as.integer(chosen))
    emit(id, "coefficients", number(coefficients[, "Estimate"]))
    emit(id, "standard_errors", number(coefficients[, "Std. Error"]))
}

writeLines(lines, file.path(here, "bestsubset_leaps.csv"))
