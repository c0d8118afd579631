"""The statgpu Calc functions: the one table every other description is made from.

addin/generate.py turns this table into the UNO interface (XStatGpu.idl), the
Function Wizard configuration (CalcAddIns.xcu) and the C++ header that the
add-in component answers XAddIn's questions from. Nothing else spells a
function's name, description or arguments, so they cannot drift apart.

A row per function:
  method       the programmatic name: the XStatGpu method Calc calls; after the
               service name, and upper-cased, what an .ods file stores
  display      the name users type and the Function Wizard shows
  returns      the IDL return type
  description  the Function Wizard's text for the function
  arguments    a row per argument: IDL name, IDL type, display name, description

The argument types are the ones that let Calc hand us what we need:
  sequence< sequence< any > >  a range or array, cell by cell, so an empty cell
                               (void) and text (string) can be told from a number;
                               a sequence of doubles would turn both into 0.
                               A com::sun::star::table::XCellRange reads a large
                               range faster, but Calc refuses every Data that is
                               not a reference (an inline array, A1:A10*2, IF(...))
                               with Err:504 before the call: measured in
                               bench/NOTES.md ("In Calc"), not used.
  double                       a single number; Calc converts or rejects the rest.
  any                          a single value, or a range (as a sequence of
                               sequences of any) when one is given. Calc makes
                               every argument of this type optional, and only
                               those.
  sequence< any >              as the last argument: any number of further
                               arguments, each a value or a range as for any;
                               but in an array formula Calc calls the function
                               once per cell of a range given there, so
                               GPUMEDIAN declares 29 arguments of type any
                               first (MEDIAN_NUMBERED_ARGUMENTS).

A range argument (sequence< sequence< any > >) is never optional: Calc answers
Err:511 when it is left out, as for PERCENTILE.INC's p. The Function Wizard
marks the optional arguments itself, so their descriptions do not say so.
"""

from collections import namedtuple

Argument = namedtuple("Argument", "name type display description")
Function = namedtuple("Function", "method display returns description arguments")

MODULE = "org.statgpu"
INTERFACE = "XStatGpu"
# The name Calc files the functions under; an .ods file stores a formula by
# service and method name, upper-cased: of:=ORG.STATGPU.STATGPU.GPUMEDIAN(...)
SERVICE_NAME = "org.statgpu.StatGpu"
IMPLEMENTATION_NAME = "org.statgpu.StatGpuImpl"
# The protocol handler of the analysis menu (org.statgpu.dialog:...), in the
# same library (addin/menu_handler.hxx).
MENU_HANDLER_NAME = "org.statgpu.MenuHandlerImpl"
# One of Calc's own categories (Statistical), so the functions sit beside MEDIAN.
CATEGORY = "Statistical"
# Every method may raise these: Calc shows IllegalArgumentException as Err:502,
# NoConvergenceException as Err:523 and any other exception as #VALUE!.
RAISES = ("com::sun::star::lang::IllegalArgumentException",
          "com::sun::star::sheet::NoConvergenceException")

RANGE = "sequence< sequence< any > >"

DATA = Argument(
    "data", RANGE, "Data",
    "The numbers: a range or an array. Empty cells and text are skipped, as MEDIAN skips them.")

# GPUMEDIAN's Data 2 ... Data 30 are arguments of their own, of type any,
# before the sequence< any > that takes the rest: Calc gives an add-in's
# further arguments (those past its declared ones) the parameter class Value,
# so an array formula calls the function once per cell of a range given
# there ({=SUM(GPUMEDIAN(A1;5;C1:C3))} had summed three medians, each with one
# cell of C1:C3), where an argument of type any is a Reference, read whole.
MEDIAN_NUMBERED_ARGUMENTS = 30

FUNCTIONS = [
    Function(
        "gpuMedian", "GPUMEDIAN", "double",
        "Returns the median of the numbers in Data, exactly as MEDIAN does, "
        "computed by the statgpu engine (on the GPU when one is available).",
        [DATA]
        + [Argument("data%d" % number, "any", "Data %d" % number,
                    "More numbers: a range, an array or a number; all the arguments together are the "
                    "data, as in MEDIAN(A1:A10; C1:C10; 5).")
           for number in range(2, MEDIAN_NUMBERED_ARGUMENTS + 1)]
        + [Argument("moreData", "sequence< any >", "Data",
                    "Yet more numbers, ranges or arrays, up to the 255 arguments MEDIAN takes.")]),
    Function(
        "gpuSmall", "GPUSMALL", "any",
        "Returns the k-th smallest number in Data, exactly as SMALL does. "
        "A range of k gives an array of results of the same shape.",
        [DATA,
         Argument("k", RANGE, "k",
                  "The rank from the smallest, from 1 to the count of numbers (a fraction is rounded "
                  "down), or a range of ranks (enter the formula as an array formula over a range of "
                  "that shape).")]),
    Function(
        "gpuLarge", "GPULARGE", "any",
        "Returns the k-th largest number in Data, exactly as LARGE does. "
        "A range of k gives an array of results of the same shape.",
        [DATA,
         Argument("k", RANGE, "k",
                  "The rank from the largest, from 1 to the count of numbers (a fraction is rounded "
                  "down), or a range of ranks (enter the formula as an array formula over a range of "
                  "that shape).")]),
    Function(
        "gpuQuantile", "GPUQUANTILE", "any",
        "Returns the p-quantile of the numbers in Data, exactly as PERCENTILE.INC does. "
        "A range of p gives an array of quantiles of the same shape.",
        [DATA,
         Argument("p", RANGE, "p",
                  "The probability, from 0 to 1, or a range of probabilities (enter the formula "
                  "as an array formula over a range of that shape). Text such as \"0.5\" is read "
                  "as the number it shows, as PERCENTILE.INC reads it.")]),
    Function(
        "kmeans", "KMEANS", "any",
        "Clusters the rows of Data into k groups by k-means (Lloyd's algorithm from k-means++ "
        "starts; the best of several runs is kept). Returns the k centroids, one row per cluster, "
        "or with Output the cluster of each row, the cluster sizes or a summary. Enter it as an "
        "array formula over a range of that size.",
        [Argument("data", RANGE, "Data",
                  "The observations: one row each, one column per variable. A row with an empty "
                  "or text cell is left out of the clustering, and its label is empty. The labels end at "
                  "Data's last row holding anything: a whole column gives as many as its data fills."),
         Argument("k", "double", "k",
                  "The number of clusters, from 1 to the number of complete rows; a fraction is "
                  "rounded down."),
         Argument("output", "any", "Output",
                  "\"centroids\" (the default; k rows, a column per variable), \"labels\" "
                  "(the cluster, 1 to k, of each row of Data), \"sizes\" (the rows in each cluster) "
                  "or \"summary\" (inertia, iterations, converged and more, with their names)."),
         Argument("restarts", "any", "Restarts",
                  "how many runs from different random starts, from 1 to 1000; the run "
                  "with the lowest inertia is kept. Default 10."),
         Argument("maxIterations", "any", "MaxIter",
                  "the most iterations of each run, from 1 to 100000. Default 300."),
         Argument("seed", "any", "Seed",
                  "a whole number from 0 that chooses the random starts; the same Seed "
                  "gives the same clusters. Default 0.")]),
    Function(
        "ltsFit", "LTSFIT", "any",
        "Fits a straight line (a linear model) of Y on the columns of X by least trimmed squares, "
        "a robust regression that outliers do not pull: the fit explains the share Alpha of the "
        "rows best, then refits on the rows it does not flag (as R's robustbase::ltsReg). Returns "
        "the coefficients, intercept first, or with Output the 0/1 weight of each row (0 flags an "
        "outlier), the residuals or a summary. An Output ending in \" lms\" (such as "
        "\"coefficients lms\") fits by least median of squares instead. Enter it as an array "
        "formula over a range of that size.",
        [Argument("y", RANGE, "Y",
                  "The response: one column. A row with an empty or text cell in Y or X is left out "
                  "of the fit, and its weight and residual are empty. The per-row outputs end at the last "
                  "row of Y or X holding anything: a whole column gives as many as its data fills."),
         Argument("x", RANGE, "X",
                  "The predictors: one or more columns, with as many rows as Y."),
         Argument("alpha", "any", "Alpha",
                  "the share of the rows the fit must explain, from 0.5 (the default: the "
                  "most robust, up to half the rows may be outliers) to 1."),
         Argument("output", "any", "Output",
                  "\"coefficients\" (the default; a column, the intercept first), \"weights\" "
                  "(1, or 0 for an outlier, for each row of Y), \"residuals\" (of each row of Y), "
                  "\"summary\" (objective, h, scales, outliers and more, with their names) or "
                  "\"subset\" (the rows of Y the raw fit explains, counted from 1); add "
                  "\" lms\" for least median of squares."),
         Argument("intercept", "any", "Intercept",
                  "TRUE (the default) to fit an intercept, FALSE for a line through 0."),
         Argument("seed", "any", "Seed",
                  "a whole number from 0 that chooses the random starts; the same Seed "
                  "gives the same fit. Default 0.")]),
    Function(
        "bestSubset", "BESTSUBSET", "any",
        "Finds, for every number of predictors, the subsets of the columns of X whose linear fit of Y has "
        "the smallest residual sum of squares, exactly (every subset is searched or proved worse, as R's "
        "leaps::regsubsets), and chooses the size by a validation error or a criterion. Returns a row per "
        "subset (size, RSS, R2, adjusted R2, Cp, BIC, PRESS, validation error, chosen, the predictors' "
        "names), or with Output which predictors each subset has, the chosen model's coefficients or a "
        "summary. A first row of X that is all text names the predictors. Enter it as an array formula.",
        [Argument("y", RANGE, "Y",
                  "The response: one column. A row with an empty or text cell in Y or X is left out."),
         Argument("x", RANGE, "X",
                  "The candidate predictors: up to 128 columns, with as many rows as Y; its first row may "
                  "hold their names."),
         Argument("maxSize", "any", "MaxSize",
                  "The largest number of predictors in a subset, from 1. Default: all."),
         Argument("output", "any", "Output",
                  "\"subsets\" (the default: a row per size, 12 columns), \"which\" (size, rank, then 1 or 0 "
                  "per predictor), \"coefficients\" (the chosen model: a row per term, the intercept first, "
                  "4 columns: the term's name, coefficient, standard error, t value) or \"summary\" (the "
                  "chosen size, criterion, RSS and more, with their names)."),
         Argument("intercept", "any", "Intercept",
                  "TRUE (the default) to fit an intercept in every model, FALSE for none."),
         Argument("validation", "any", "Validation",
                  "How the validation error is measured: \"press\" (the default: leave-one-out, exact), "
                  "\"holdout\" (a random fifth of the rows held out; \"holdout 0.3\" holds out 30%) or "
                  "\"kfold\" (10-fold cross-validation, the search repeated per fold; \"kfold 5\" for 5)."),
         Argument("criterion", "any", "Criterion",
                  "What chooses the size: \"validation\" (the default: the lowest validation error), "
                  "\"cp\", \"bic\" (the lowest) or \"adjr2\" (the highest adjusted R2)."),
         Argument("nbest", "any", "NBest",
                  "How many subsets to report for each size, from 1 (the default) to 1000."),
         Argument("seed", "any", "Seed",
                  "A whole number from 0 that chooses the held-out rows or folds; the same Seed gives the "
                  "same result. Default 0.")]),
    Function(
        "gmmFit", "GMMFIT", "any",
        "Fits a Gaussian mixture of k components to the rows of Data by EM, as scikit-learn's "
        "GaussianMixture does (k-means starts, the run of the highest likelihood kept), with each "
        "column's variances regularised by 1e-6 of its variance, so that the fit is the same in any "
        "units; with several k "
        "or Covariance \"all\", the model of the lowest BIC among them. Returns a "
        "summary (log-likelihood, BIC, AIC and more, with their names), or with Output the weights, "
        "means, covariances, the most likely component of each row, each row's probabilities or its "
        "log density. Enter it as an array formula over a range of that size.",
        [Argument("data", RANGE, "Data",
                  "The observations: one row each, one column per variable. A row with an empty or "
                  "text cell is left out of the fit, and its per-row outputs are empty. They end at Data's "
                  "last row holding anything: a whole column gives as many as its data fills."),
         Argument("k", RANGE, "k",
                  "The number of components, from 1 to the number of complete rows (a fraction is "
                  "rounded down); or a range or array of candidate numbers ({1;2;3;4}): every one is "
                  "fitted and the model of the lowest BIC is returned."),
         Argument("covariance", "any", "Covariance",
                  "\"full\" (the default: each component its own covariance matrix), \"tied\" (one "
                  "matrix for all), \"diag\" (each its own variances), \"spherical\" (each one "
                  "variance), or \"all\": each of the four is fitted and the lowest BIC chosen."),
         Argument("output", "any", "Output",
                  "\"summary\" (the default; log-likelihood, BIC, AIC, parameters, iterations and more, "
                  "each value beside its name), \"weights\" (k rows), \"means\" (k rows, a column per "
                  "variable), \"covariances\" (full: k stacked blocks of one row and column per "
                  "variable; tied: one block; diag: k rows of variances; spherical: k variances), "
                  "\"labels\" (the component, 1 to k, of each row of Data), \"probabilities\" (each "
                  "row's probability of each component), \"density\" (each row's log density) or \"selection\" "
                  "(a row per model compared: k, covariance, log-likelihood, parameters, BIC, AIC, "
                  "iterations, converged, and 1 in the last column for the model chosen)."),
         Argument("restarts", "any", "Restarts",
                  "How many runs from different k-means starts, from 1 to 1000; the run of the highest "
                  "likelihood is kept. Default 1."),
         Argument("maxIterations", "any", "MaxIter",
                  "The most EM iterations of each run, from 1 to 100000. Default 100."),
         Argument("seed", "any", "Seed",
                  "A whole number from 0 that chooses the k-means starts; the same Seed gives the same "
                  "fit. Default 0.")]),
    Function(
        "igmmFit", "IGMMFIT", "any",
        "Fits a mixture of k inverse Gaussian distributions to every column of Data, each column a "
        "data set (response times of one subject, say), by EM from several random starts, keeping "
        "the best. Returns the parameters (a row per data set and component), or with Output a "
        "summary per data set or each value's most likely component. Enter it as an array formula.",
        [Argument("data", RANGE, "Data",
                  "The data sets, one per column: positive numbers; empty and text cells are skipped, so "
                  "columns may differ in length, and a first row of texts names the data sets. A column "
                  "with a value that is not positive, fewer than 3 values a component, all values equal, "
                  "values more than 1e300 apart or subnormal values is not fitted: its status says why. "
                  "Values of any size are fitted, in their own units."),
         Argument("k", "double", "k",
                  "The number of components, from 1 to 64; a fraction is rounded down."),
         Argument("output", "any", "Output",
                  "\"parameters\" (the default: a row per data set and component: data set, component, "
                  "weight alpha, mean mu, shape lambda), \"summary\" (a row per data set: data set, "
                  "values, log-likelihood, iterations, converged, best start, re-seeded components, "
                  "status) or \"labels\" (the shape of Data down to its last row holding anything: the "
                  "most likely component, 1 to k, of each value)."),
         Argument("starts", "any", "Starts",
                  "Random starts per data set, from 1 to 1000; the start of the highest likelihood is "
                  "kept. Default 10."),
         Argument("maxIterations", "any", "MaxIter",
                  "The most EM iterations of each start, from 1 to 100000. Default 100."),
         Argument("seed", "any", "Seed",
                  "A whole number from 0 that chooses the random starts; the same Seed gives the same "
                  "fit. Default 0.")]),
    Function(
        "gpuInfo", "GPUINFO", "string",
        "Returns the backend statgpu computes on: the GPU and its CUDA versions, "
        "or the CPU threads and why CUDA is not used.",
        []),
]
