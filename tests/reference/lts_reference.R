# lts_reference.R: reference values for statgpu's least trimmed squares engine
# (statgpu_lts) from R's robustbase::ltsReg on the classic data sets of
# robust regression (R's datasets and robustbase packages).
#
# Re-run from the repository root (Debian's r-base-core and r-cran-robustbase)
# with
#     Rscript tests/reference/lts_reference.R
# It writes, next to itself:
#   lts_<data set>.csv   the data, response first, then the predictors
#   lts_r.csv            a line per case and quantity: case,quantity,values
#                        (values space-separated, numbers as %.17g, row
#                        numbers 1-based)
# The engine test (tests/test_lts_reference.c) needs only these committed
# files, not R.
#
# Each case is fitted with set.seed(1) .. set.seed(10) before the call; the
# fit of seed 1 is written, with `stable` 1 when all ten seeds gave the same
# best subset, and `best_objective` the lowest objective of the ten.
# `exhaustive` is 1 where ltsReg lists every elemental subset (n <= replow(p)
# of rfltsreg.f: 500, 50, 22, 17, 15, 14 for p = 1..6).
# `objective` is the sum of the h smallest squared residuals of the raw fit
# in the data's own units; robustbase's crit (written too) is the same sum on
# the scale its Fortran standardises to.
library(robustbase)

here <- local({
    file_argument <- grep("^--file=", commandArgs(FALSE), value = TRUE)
    if (length(file_argument)) dirname(normalizePath(sub("^--file=", "", file_argument[1]))) else "."
})

robust_data <- function(name) {
    e <- new.env()
    data(list = name, package = "robustbase", envir = e)
    get(name, envir = e)
}

# Response first, then predictors.
data_sets <- list(
    stackloss = datasets::stackloss[, c(4, 1:3)],
    hbk       = robust_data("hbk")[, c(4, 1:3)],
    starsCYG  = robust_data("starsCYG")[, c(2, 1)],
    aircraft  = robust_data("aircraft")[, c(5, 1:4)],
    salinity  = robust_data("salinity")[, c(4, 1:3)],
    wood      = robust_data("wood")[, c(6, 1:5)],
    heart     = robust_data("heart")[, c(3, 1:2)],
    phosphor  = robust_data("phosphor")[, c(3, 1:2)],
    coleman   = robust_data("coleman")[, c(6, 1:5)],
    pension   = robust_data("pension")[, c(2, 1)],
    lactic    = robust_data("lactic")[, c(2, 1)],
    toxicity  = robust_data("toxicity")
)
data_sets$Animals2 <- local({
    a <- robust_data("Animals2")
    data.frame(log_brain = log(a$brain), log_body = log(a$body))
})

for (name in names(data_sets))
    write.csv(data_sets[[name]], file.path(here, paste0("lts_", name, ".csv")), row.names = FALSE)

# Cases: data set, alpha, intercept.
cases <- list(
    list("stackloss", 0.5, TRUE), list("stackloss", 0.75, TRUE), list("stackloss", 0.5, FALSE),
    list("hbk", 0.5, TRUE), list("hbk", 0.9, TRUE),
    list("starsCYG", 0.5, TRUE), list("starsCYG", 0.75, TRUE), list("starsCYG", 0.5, FALSE),
    list("aircraft", 0.5, TRUE), list("salinity", 0.5, TRUE), list("wood", 0.5, TRUE),
    list("heart", 0.5, TRUE), list("heart", 0.5, FALSE), list("phosphor", 0.5, TRUE),
    list("coleman", 0.5, TRUE), list("coleman", 0.8, TRUE),
    list("pension", 0.5, TRUE), list("lactic", 0.5, TRUE), list("toxicity", 0.5, TRUE),
    list("Animals2", 0.5, TRUE), list("Animals2", 0.5, FALSE)
)

number <- function(x) sprintf("%.17g", x)
replow <- c(500, 50, 22, 17, 15, 14)

lines <- "case,quantity,values"
emit <- function(case, quantity, values)
    lines <<- c(lines, paste(case, quantity, paste(values, collapse = " "), sep = ","))

for (case in cases) {
    name <- case[[1]]; alpha <- case[[2]]; intercept <- case[[3]]
    d <- data_sets[[name]]
    y <- d[[1]]
    x <- as.matrix(d[, -1, drop = FALSE])
    n <- nrow(x); p <- ncol(x) + intercept
    fit_for <- function(seed) {
        set.seed(seed)
        ltsReg(x, y, intercept = intercept, alpha = alpha, mcd = FALSE)
    }
    objective_of <- function(fit) {
        design <- if (intercept) cbind(1, x) else x
        r <- y - design %*% fit$raw.coefficients
        sum(sort(r^2)[seq_len(fit$quan)])
    }
    fits <- lapply(1:10, fit_for)
    fit <- fits[[1]]
    objectives <- vapply(fits, objective_of, 0)
    stable <- all(vapply(fits, function(f) identical(f$best, fit$best), TRUE))
    id <- sprintf("%s_a%g_%s", name, alpha, if (intercept) "int" else "noint")
    emit(id, "data", name)
    emit(id, "alpha", number(alpha))
    emit(id, "intercept", as.integer(intercept))
    emit(id, "n_p", c(n, p))
    emit(id, "exhaustive", as.integer(p <= 6 && n <= replow[p]))
    emit(id, "stable", as.integer(stable))
    emit(id, "h", fit$quan)
    emit(id, "raw_coefficients", number(fit$raw.coefficients))
    emit(id, "coefficients", number(fit$coefficients))
    emit(id, "raw_scale", number(fit$raw.scale))
    emit(id, "scale", number(fit$scale))
    emit(id, "raw_cnp2", number(fit$raw.cnp2))
    emit(id, "cnp2", number(fit$cnp2))
    emit(id, "crit", number(fit$crit))
    emit(id, "objective", number(objectives[1]))
    emit(id, "best_objective", number(min(objectives)))
    emit(id, "best", fit$best)
    emit(id, "raw_weights", as.integer(abs(fit$raw.resid) <= qnorm(0.9875)))
    emit(id, "weights", as.integer(fit$lts.wt))
    emit(id, "residuals", number(fit$residuals))
}
writeLines(lines, file.path(here, "lts_r.csv"))
