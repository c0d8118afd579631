# ltsfit_stackloss.R: reference values for statgpu's least trimmed squares
# (the CLI's `statgpu lts` and Calc's LTSFIT) from R's robustbase::ltsReg on
# Brownlee's stack loss data (R's datasets::stackloss, 21 x 4: Air.Flow,
# Water.Temp, Acid.Conc., stack.loss).
#
# Re-run from the repository root (Debian's r-base-core and r-cran-robustbase)
# with
#     Rscript tests/reference/ltsfit_stackloss.R
# It writes, next to itself, ltsfit_stackloss_r.csv: a line per case and
# quantity, the values space-separated (numbers as %.17g; row numbers
# 1-based). The cases:
#   default       ltsReg(stack.loss ~ ., stackloss): alpha 0.5, intercept
#   alpha75       the same with alpha = 0.75
#   no_intercept  ltsReg(x, y, intercept = FALSE)
#   rows_dropped  the default fit without rows 3 and 10 (as when those rows
#                 hold an empty cell in Calc)
#   least_squares lm(stack.loss ~ .): the coefficients only
# objective is the sum of the h smallest squared residuals of the raw fit on
# the data's own scale (robustbase's crit is on a standardised scale). Each
# fit is the same for every seed tried (1 to 20): the printed seeds agree.
library(robustbase)

here <- local({
    file_argument <- grep("^--file=", commandArgs(FALSE), value = TRUE)
    if (length(file_argument)) dirname(normalizePath(sub("^--file=", "", file_argument[1]))) else "."
})

x <- as.matrix(datasets::stackloss[, 1:3])
y <- datasets::stackloss$stack.loss
number <- function(v) paste(sprintf("%.17g", v), collapse = " ")

cases <- list(
    default      = function() ltsReg(x, y),
    alpha75      = function() ltsReg(x, y, alpha = 0.75),
    no_intercept = function() ltsReg(x, y, intercept = FALSE),
    rows_dropped = function() ltsReg(x[-c(3, 10), ], y[-c(3, 10)])
)

lines <- "case,quantity,values"
for (name in names(cases)) {
    set.seed(1)
    fit <- cases[[name]]()
    for (seed in 2:20) {  # the reference must not depend on the random starts
        set.seed(seed)
        again <- cases[[name]]()
        stopifnot(isTRUE(all.equal(again$raw.coefficients, fit$raw.coefficients, tolerance = 1e-12)),
                  identical(again$lts.wt, fit$lts.wt))
    }
    design <- if (name == "no_intercept") x else cbind(1, x)
    rows <- if (name == "rows_dropped") -c(3, 10) else seq_along(y)
    raw_residuals <- y[rows] - drop(design[rows, , drop = FALSE] %*% fit$raw.coefficients)
    objective <- sum(sort(raw_residuals^2)[seq_len(fit$quan)])
    values <- list(
        h = fit$quan, raw_coefficients = fit$raw.coefficients, coefficients = fit$coefficients,
        raw_scale = fit$raw.scale, scale = fit$scale, objective = objective, crit = fit$crit,
        best = fit$best, raw_weights = fit$raw.weights, weights = fit$lts.wt, residuals = fit$residuals)
    for (quantity in names(values))
        lines <- c(lines, paste(name, quantity, number(values[[quantity]]), sep = ","))
}
# Least squares on every row (lm), what Calc's LINEST gives beside LTSFIT.
lines <- c(lines, paste("least_squares", "coefficients", number(coef(lm(y ~ x))), sep = ","))
writeLines(lines, file.path(here, "ltsfit_stackloss_r.csv"))
cat(sprintf("robustbase %s\n", packageVersion("robustbase")))
