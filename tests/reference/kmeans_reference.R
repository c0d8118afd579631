# kmeans_reference.R: reference values for statgpu's k-means from R's own
# stats::kmeans (algorithm = "Lloyd") on two classic data sets of R's
# datasets package: faithful (272 x 2) and iris[, 1:4] (150 x 4).
#
# Re-run from the repository root (R 4.2, Debian's r-base-core) with
#     Rscript tests/reference/kmeans_reference.R
# It writes, next to itself:
#   faithful.csv, iris.csv   the data, as the engine test reads them
#   kmeans_r.csv             one line per case: the initial centres (1-based
#                            rows of the data, drawn with set.seed), R's
#                            centres, cluster labels, tot.withinss and iter
# The engine test (tests/test_kmeans_reference.c) runs Lloyd from the same
# initial centres and compares; it needs only these committed files, not R.

here <- local({
    file_argument <- grep("^--file=", commandArgs(FALSE), value = TRUE)
    if (length(file_argument)) dirname(normalizePath(sub("^--file=", "", file_argument[1]))) else "."
})

data_sets <- list(
    faithful = as.matrix(datasets::faithful),
    iris     = as.matrix(datasets::iris[, 1:4])
)
for (name in names(data_sets))
    write.csv(data_sets[[name]], file.path(here, paste0(name, ".csv")), row.names = FALSE)

number <- function(x) sprintf("%.17g", x)
joined <- function(x) paste(x, collapse = " ")

# Cases: (data set, k, starts); each start draws k distinct rows. iter.max is
# large enough for Lloyd to converge, except in the cases marked "short",
# which stop after 2 iterations (there only the centres are compared: R keeps
# the labels of its last assignment, statgpu assigns once more).
cases <- list(
    list("faithful", 2, 1:3, 100), list("faithful", 3, 1:3, 100), list("faithful", 4, 1:3, 100),
    list("faithful", 6, 1:2, 100),
    list("iris", 2, 1:3, 100), list("iris", 3, 1:3, 100), list("iris", 4, 1:3, 100), list("iris", 5, 1:2, 100),
    list("faithful", 3, 4, 2), list("iris", 3, 4, 2)
)

lines <- "dataset,k,start,iter_max,iterations,converged,tot_withinss,init_rows,centers,labels"
for (case in cases) {
    name <- case[[1]]; k <- case[[2]]; iter_max <- case[[4]]
    x <- data_sets[[name]]
    for (start in case[[3]]) {
        set.seed(1000 * k + start)
        repeat {  # R refuses duplicated initial centres
            rows <- sort(sample(nrow(x), k))
            if (!any(duplicated(x[rows, , drop = FALSE]))) break
        }
        fit <- suppressWarnings(stats::kmeans(x, centers = x[rows, , drop = FALSE],
                                              iter.max = iter_max, algorithm = "Lloyd"))
        converged <- as.integer(fit$iter <= iter_max)
        lines <- c(lines, paste(name, k, start, iter_max, fit$iter, converged, number(fit$tot.withinss),
                                joined(rows), joined(number(as.vector(fit$centers))),
                                joined(fit$cluster), sep = ","))
    }
}
writeLines(lines, file.path(here, "kmeans_r.csv"))
cat(sprintf("wrote %d cases to %s\n", length(lines) - 1, file.path(here, "kmeans_r.csv")))
