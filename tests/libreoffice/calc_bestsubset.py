"""calc_bestsubset.py: BESTSUBSET in a real LibreOffice, run by test_calc.py in
its office session.

The engine's tests check the search against a brute force and R's leaps;
here Calc's side is checked, on the Motor Trend cars (samples/mtcars.csv: mpg
on ten predictors, 32 cars), against leaps::regsubsets and lm, on two
workbooks.

A workbook of its own: the cars in A1:K33 (row 1 the names), the same with
car 5's hp emptied and car 12's mpg the text "n/a" in M1:W33, the same
without those two cars in Y1:AI31, a constant Y in AK:
  - =BESTSUBSET(Y; X) as an array formula: the subsets table, 12 columns,
    a row per size, whose RSS, Cp and BIC (leaps) equal regsubsets's (1e-9
    relative), and R2 and adjusted R2 too; the predictors named by the row
    of names (X1 ... X10 without it, the numbers the same); PRESS / n as
    the validation error; one chosen row, at the lowest validation error;
  - Output "which": the 0/1 of regsubsets's which; "coefficients": 4
    columns, the terms named first ((Intercept), hp, wt, qsec, am), then
    lm's coefficients, standard errors and t values of the chosen model
    (1e-9 relative); "summary": its names and values (the chosen size, RSS
    of the chosen, full and null models, sigma2, 32 used, none left out: the
    row of names is not a row left out);
  - NBest 2, Intercept FALSE and MaxSize 2 against regsubsets with nbest =
    2, intercept = FALSE and nvmax = 2 (the third row of a 3-row range
    #N/A: the table has 2);
  - Validation "kfold 5" and "holdout 0.3" with NBest 2: a positive number
    in every rank-1 row's validation error, "" (empty text) in the rank-2
    rows, the summary's folds 5 and rows held out 10, the same table again
    with Seed 0 given; under "press" every row has PRESS / n;
  - Criterion "cp": the chosen size is that of the lowest Cp (3: wt, qsec,
    am), and its coefficients are lm's, the terms named;
  - rows with an empty X cell or a text Y cell are left out: the tables
    equal those of the data without the two cars (and regsubsets's on
    them), the summary says 30 used and 2 left out (the row of names not
    counted);
  - Err:502 for an unknown Output, Validation "kfold 1" and "holdout 1",
    MaxSize 0.5, NBest 0.5 (0 after rounding down; 0 itself is an empty
    cell: the default), an unknown Criterion, a constant Y and a Y of two
    columns.

The sample samples/bestsubset.ods (made by samples/make_bestsubset.py):
  - no error cell but the #N/A of the chart's helper column;
  - the data are samples/mtcars.csv's, under a row of names;
  - the subsets table equals regsubsets's (RSS, Cp, BIC (leaps), names)
    and chooses size 4 (hp, wt, qsec, am) by the validation error;
  - the criteria table: validation 4, Cp 3, BIC 3, adjusted R2 5, each with
    its predictors;
  - the summary: chosen size 4, 32 used, no row left out;
  - the coefficients table sized for 11 terms, 4 columns: the five terms
    named by BESTSUBSET ((Intercept), hp, wt, qsec, am) with lm's values
    (1e-9), the rest empty;
  - one chart: the validation error column against the size, and the
    helper column that shows the chosen size's error alone.

The reference values were made with R 4.2.2 and leaps 3.1 (as
tests/reference/bestsubset_leaps.R makes the engine's) by

    library(leaps)
    s <- summary(regsubsets(mpg ~ ., mtcars, nvmax = 10))  # also nbest = 2,
    s$rss; s$cp; s$bic; s$rsq; s$adjr2; s$which             # intercept = FALSE,
                                                            # nvmax = 2, mtcars[-c(5, 12), ]
    summary(lm(mpg ~ hp + wt + qsec + am, mtcars))$coefficients
    summary(lm(mpg ~ wt + qsec + am, mtcars))$coefficients

and printed with sprintf("%.17g"); the statgpu CLI (statgpu bestsubset on
the same CSV) gives the same tables.
"""

import csv
import math
import os

ILLEGAL_ARGUMENT = 502    # Err:502
NOT_AVAILABLE = 32767     # #N/A
RELATIVE_TOLERANCE = 1e-9
PREDICTORS = ("cyl", "disp", "hp", "drat", "wt", "qsec", "vs", "am", "gear", "carb")
CARS = 32
SUMMARY_NAMES = [
    "chosen size (predictors)", "criterion (validation error)", "validation (PRESS: leave-one-out)",
    "folds (k-fold)", "rows held out (holdout)", "R2 of the chosen model", "RSS of the chosen model",
    "RSS of the full model", "RSS of the null model", "sigma2 (Cp's, from the full model)",
    "predictors left out as dependent on others", "subsets evaluated", "observations used",
    "rows left out (missing values)",
]

# ---- leaps::regsubsets(mpg ~ ., mtcars, nvmax = 10) and lm (see above) ---------------------
RSS = [278.32193754334361, 191.17196625596227, 169.28592953765204, 160.06646019081961, 153.43780650245898,
       150.09325533078101, 148.52828480396269, 147.84282403042434, 147.57430122549738, 147.49443001665074]
CP = [11.626992610842301, 1.2187315203834856, 0.10263573946057392, 0.78998375482885663, 1.8462075902654966,
      3.3700162208876243, 5.147198443569021, 7.0496037327539725, 9.0113719235742664, 11]
BIC_LEAPS = [-37.794615318517231, -46.348243336331024, -46.773201635892789, -45.099468000673966,
             -42.987133365802627, -40.22662986089636, -37.096298532775606, -33.778585046541053,
             -30.371022698281799, -26.922610750716217]
R2 = [0.75283279365826428, 0.83022739332940942, 0.84966355636170698, 0.85785101906236094, 0.86373767617757224,
      0.86670784581948879, 0.86809763706819554, 0.86870636890567754, 0.86894483387225063, 0.86901576447776463]
ADJUSTED_R2 = [0.74459388678020644, 0.81851893769695483, 0.83355608025760419, 0.83679191077530324,
               0.83753338313479775, 0.83471772881616613, 0.82962611454641921, 0.82303901895982623,
               0.81533135681998958, 0.80664231899098582]
NAMES = ["wt", "cyl, wt", "wt, qsec, am", "hp, wt, qsec, am", "disp, hp, wt, qsec, am",
         "disp, hp, drat, wt, qsec, am", "disp, hp, drat, wt, qsec, am, gear",
         "disp, hp, drat, wt, qsec, am, gear, carb", "disp, hp, drat, wt, qsec, vs, am, gear, carb",
         "cyl, disp, hp, drat, wt, qsec, vs, am, gear, carb"]
NULL_RSS = 1126.0471874999998  # sum((mtcars$mpg - mean(mtcars$mpg))^2)
# nbest = 2: by size, then rank.
RSS_NBEST2 = [278.32193754334367, 308.33423514538583, 191.17196625596225, 195.04775474146641, 169.28592953765207,
              176.62052019882162, 160.06646019081967, 161.24998561825487, 153.43780650245904, 156.7519492408054,
              150.09325533078103, 150.46041211065341, 148.52828480396269, 149.0898564155909, 147.84282403042434,
              148.09444301895198, 147.57430122549738, 147.65455572328403, 147.49443001665074]
CP_NBEST2 = [11.626992610842308, 15.900091259867466, 1.2187315203834821, 1.7705595330508004, 0.10263573946057747,
             1.1469219804201352, 0.78998375482886374, 0.9584920434017512, 1.8462075902655037, 2.3180694598792719,
             3.3700162208876314, 3.4222913635926773, 5.147198443569021, 5.2271540313350222, 7.0496037327539725,
             7.085428806002394, 9.0113719235742664, 9.0227984191600967, 11]
BIC_NBEST2 = [-37.794615318517224, -34.517627118537355, -46.348243336331024, -45.705969581952367,
              -46.773201635892782, -45.415943994535652, -45.099468000673951, -44.863731638910124,
              -42.987133365802613, -42.303315790606661, -40.22662986089636, -40.148447332628898,
              -37.096298532775606, -36.975537662317265, -33.778585046541053, -33.724169395187474,
              -30.371022698281799, -30.353625049427457, -26.922610750716217]
NAMES_NBEST2 = ["wt", "cyl", "cyl, wt", "hp, wt", "wt, qsec, am", "cyl, hp, wt", "hp, wt, qsec, am",
                "wt, qsec, am, carb", "disp, hp, wt, qsec, am", "drat, wt, qsec, am, carb",
                "disp, hp, drat, wt, qsec, am", "disp, hp, wt, qsec, am, gear", "disp, hp, drat, wt, qsec, am, gear",
                "cyl, disp, hp, drat, wt, qsec, am", "disp, hp, drat, wt, qsec, am, gear, carb",
                "disp, hp, drat, wt, qsec, vs, am, gear", "disp, hp, drat, wt, qsec, vs, am, gear, carb",
                "cyl, disp, hp, drat, wt, qsec, am, gear, carb", "cyl, disp, hp, drat, wt, qsec, vs, am, gear, carb"]
# intercept = FALSE
RSS_NO_INTERCEPT = [641.54551599171839, 290.73806677765083, 180.83228362398216, 169.75263475948262,
                    163.95550072807262, 155.8108038681813, 152.45810032030633, 151.34411223529324,
                    150.58653214043684, 150.52895882774544]
CP_NO_INTERCEPT = [63.762698298929024, 14.491740585462459, 0.42886970526449275, 0.8095648424844164,
                   1.9623062838374778, 2.7719484130795067, 4.2819464983140278, 6.1191357138567142,
                   8.0084144133399633, 10]
BIC_NO_INTERCEPT = [-95.284666016554226, -117.14556647604658, -128.87511875801528, -127.43266938821309,
                    -125.07884496533158, -123.24359157391874, -120.4739410856032, -117.2428827263892,
                    -113.9377308143944, -110.48423171829398]
NAMES_NO_INTERCEPT = ["drat", "wt, qsec", "wt, qsec, am", "disp, wt, qsec, am", "disp, drat, wt, qsec, am",
                      "disp, hp, drat, wt, qsec, am", "disp, hp, drat, wt, qsec, am, gear",
                      "cyl, disp, hp, drat, wt, qsec, am, gear", "cyl, disp, hp, drat, wt, qsec, am, gear, carb",
                      "cyl, disp, hp, drat, wt, qsec, vs, am, gear, carb"]
# nvmax = 2
RSS_MAX2 = [278.32193754334344, 191.17196625596227]
CP_MAX2 = [11.626992610842279, 1.2187315203834856]
BIC_MAX2 = [-37.794615318517245, -46.348243336331024]
# mtcars[-c(5, 12), ]: without the two cars the third block leaves out
RSS_TWO_CARS_LESS = [277.49770530442686, 182.65325877936408, 163.74693343128959, 155.06402072800358,
                     148.58405192869193, 143.77676232264275, 141.273851048875, 139.91564089876277,
                     139.35492172319033, 139.26381147798591]
# lm(mpg ~ hp + wt + qsec + am): the size the validation error (PRESS) chooses
LM_TERMS = ["(Intercept)", "hp", "wt", "qsec", "am"]
LM_COEFFICIENTS = [17.440191102055373, -0.017646542516629588, -3.2380968198705027, 0.81060254196535764,
                   2.9255039413585755]
LM_STANDARD_ERRORS = [9.3188687677376425, 0.01415060319355281, 0.88989858173203595, 0.43887026403046869,
                      1.3971471010806096]
LM_T = [1.871492295549233, -1.2470523182128073, -3.6387256776700316, 1.8470208815721481, 2.0939126159986112]
# lm(mpg ~ wt + qsec + am): the size Cp chooses
LM_CP_TERMS = ["(Intercept)", "wt", "qsec", "am"]
LM_CP_COEFFICIENTS = [9.6177805145615931, -3.9165037249424888, 1.2258859715836987, 2.9358371918894215]
LM_CP_STANDARD_ERRORS = [6.9595929848182516, 0.71120163466225272, 0.2886695539110723, 1.4109045149271502]
LM_CP_T = [1.3819458315366928, -5.5068823439957688, 4.2466756711078224, 2.0808191913972354]


def close(a, b, tolerance=RELATIVE_TOLERANCE):
    return a == b or abs(a - b) <= tolerance * abs(b)


def all_close(ours, theirs, tolerance=RELATIVE_TOLERANCE):
    return (ours is not None and len(ours) == len(theirs)
            and all(isinstance(a, float) and close(a, b, tolerance) for a, b in zip(ours, theirs)))


def read_mtcars(source_dir):
    """Rows (mpg, cyl, ..., carb) of samples/mtcars.csv."""
    with open(os.path.join(source_dir, "samples", "mtcars.csv"), newline="") as source:
        return [tuple(float(row[name]) for name in ("mpg",) + PREDICTORS) for row in csv.DictReader(source)]


def cell_outcome(cell):
    """("error", code), ("text", string) or ("value", number) of a formula cell."""
    from com.sun.star.sheet.FormulaResult import STRING
    if cell.getError():
        return ("error", cell.getError())
    if cell.getPropertyValue("FormulaResultType2") == STRING:
        return ("text", cell.getString())
    return ("value", cell.getValue())


def table_of(cell_range):
    """The cells of a range as rows of Python values: a float per number, a
    str per text, ("error", code) per error."""
    address = cell_range.getRangeAddress()
    rows = []
    for r in range(address.EndRow - address.StartRow + 1):
        line = []
        for c in range(address.EndColumn - address.StartColumn + 1):
            kind, value = cell_outcome(cell_range.getCellByPosition(c, r))
            line.append(value if kind != "error" else ("error", value))
        rows.append(line)
    return rows


def column(table, index):
    return [line[index] for line in table]


def matches_leaps(table, rss, cp, bic, names=None, label=""):
    """(ok, detail): the subsets table's RSS, Cp and BIC (leaps) against
    regsubsets's, and its predictors' names when given."""
    ok = (len(table) == len(rss) and all(len(line) == 12 for line in table)
          and all_close(column(table, 2), rss) and all_close(column(table, 5), cp)
          and all_close(column(table, 6), bic) and (names is None or column(table, 11) == names))
    return ok, "%s RSS %r Cp %r BIC %r names %r" % (label, column(table, 2), column(table, 5), column(table, 6),
                                                    column(table, 11))


def chosen_rows(table):
    return [index for index, line in enumerate(table) if line[10] == 1.0]


def summary_of(table):
    """{name: value} of a summary table, or None when it is not 14 x 2 (value, name)."""
    if len(table) != len(SUMMARY_NAMES) or any(len(line) != 2 for line in table):
        return None
    return {line[1]: line[0] for line in table}


def check(results, office, source_dir):
    """Every BESTSUBSET check; results.check(name, ok, detail) records each."""
    check_sample(results, office, source_dir)
    check_cases(results, office, source_dir)


# ---- the workbook of cases --------------------------------------------------------------

Y, X = "$A$1:$A$33", "$B$1:$K$33"
MISSING_Y, MISSING_X = "$M$1:$M$33", "$N$1:$W$33"
LESS_Y, LESS_X = "$Y$1:$Y$31", "$Z$1:$AI$31"
CONSTANT_Y = "$AK$1:$AK$33"
LEFT_OUT_CARS = (5, 12)   # 1-based cars: car 5's hp empty, car 12's mpg text
STANDARD = "%s;%s" % (Y, X)

BAD_CASES = [
    ("an unknown Output word", "=BESTSUBSET(%s;;\"coef\")" % STANDARD),
    ("Validation \"kfold 1\"", "=BESTSUBSET(%s;;;;\"kfold 1\")" % STANDARD),
    ("Validation \"holdout 1\"", "=BESTSUBSET(%s;;;;\"holdout 1\")" % STANDARD),
    ("an unknown Validation word", "=BESTSUBSET(%s;;;;\"loo\")" % STANDARD),
    ("MaxSize 0.5", "=BESTSUBSET(%s;0.5)" % STANDARD),
    ("NBest 0.5", "=BESTSUBSET(%s;;;;;;0.5)" % STANDARD),
    ("an unknown Criterion", "=BESTSUBSET(%s;;;;;\"aic\")" % STANDARD),
    ("a constant Y", "=BESTSUBSET(%s;%s)" % (CONSTANT_Y, X)),
    ("Y of two columns", "=BESTSUBSET($A$1:$B$33;$C$1:$K$33)"),
]


def fill(sheet, cars):
    names = ("mpg",) + PREDICTORS
    sheet.getCellRangeByName("A1:K33").setDataArray((names,) + tuple(cars))
    missing = [list(car) for car in cars]
    missing[LEFT_OUT_CARS[0] - 1][3] = ""       # hp
    missing[LEFT_OUT_CARS[1] - 1][0] = "n/a"    # mpg
    sheet.getCellRangeByName("M1:W33").setDataArray((names,) + tuple(tuple(car) for car in missing))
    # setDataArray writes "" as an empty text cell; make car 5's hp truly empty.
    sheet.getCellRangeByName("P%d" % (LEFT_OUT_CARS[0] + 1)).clearContents(1 | 4)
    less = [car for index, car in enumerate(cars) if index + 1 not in LEFT_OUT_CARS]
    sheet.getCellRangeByName("Y1:AI31").setDataArray((names,) + tuple(less))
    sheet.getCellRangeByName("AK1:AK33").setDataArray((("constant",),) + tuple((5.0,) for _ in cars))


def check_cases(results, office, source_dir):
    cars = read_mtcars(source_dir)
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        fill(sheet, cars)
        placed = {}
        row = 40

        def place(key, formula, rows, columns=12):
            nonlocal row
            cell_range = sheet.getCellRangeByPosition(0, row, columns - 1, row + rows - 1)
            cell_range.setArrayFormula(formula)
            placed[key] = cell_range
            row += rows + 1

        place("subsets", "=BESTSUBSET(%s)" % STANDARD, 10)
        place("no names", "=BESTSUBSET($A$2:$A$33;$B$2:$K$33)", 10)
        place("which", "=BESTSUBSET(%s;;\"which\")" % STANDARD, 10)
        place("coefficients", "=BESTSUBSET(%s;;\"coefficients\")" % STANDARD, 5, 4)
        place("summary", "=BESTSUBSET(%s;;\"Summary\")" % STANDARD, 14, 2)
        place("nbest", "=BESTSUBSET(%s;;;;;;2)" % STANDARD, 19)
        place("no intercept", "=BESTSUBSET(%s;;;FALSE())" % STANDARD, 10)
        place("max size", "=BESTSUBSET(%s;2)" % STANDARD, 3)
        place("kfold", "=BESTSUBSET(%s;;;;\"kfold 5\";;2)" % STANDARD, 19)
        place("kfold seed 0", "=BESTSUBSET(%s;;;;\"kfold 5\";;2;0)" % STANDARD, 19)
        place("kfold summary", "=BESTSUBSET(%s;;\"summary\";;\"kfold 5\")" % STANDARD, 14, 2)
        place("holdout", "=BESTSUBSET(%s;;;;\"holdout 0.3\";;2)" % STANDARD, 19)
        place("holdout summary", "=BESTSUBSET(%s;;\"summary\";;\"HOLDOUT 0.3\")" % STANDARD, 14, 2)
        place("cp", "=BESTSUBSET(%s;;;;;\"cp\")" % STANDARD, 10)
        place("cp coefficients", "=BESTSUBSET(%s;;\"coefficients\";;;\"Cp\")" % STANDARD, 4, 4)
        place("missing", "=BESTSUBSET(%s;%s)" % (MISSING_Y, MISSING_X), 10)
        place("missing summary", "=BESTSUBSET(%s;%s;;\"summary\")" % (MISSING_Y, MISSING_X), 14, 2)
        place("less", "=BESTSUBSET(%s;%s)" % (LESS_Y, LESS_X), 10)
        place("less summary", "=BESTSUBSET(%s;%s;;\"summary\")" % (LESS_Y, LESS_X), 14, 2)
        bad_column = 14
        for index, (_, formula) in enumerate(BAD_CASES):
            sheet.getCellByPosition(bad_column, 40 + index).setFormula(formula)
        document.calculateAll()
        tables = {key: table_of(cell_range) for key, cell_range in placed.items()}

        subsets = tables["subsets"]
        ok, detail = matches_leaps(subsets, RSS, CP, BIC_LEAPS, NAMES)
        results.check("=BESTSUBSET(Y; X): a row per size, 12 columns; RSS, Cp and BIC (leaps) as regsubsets's "
                      "(1e-9), the predictors named by X's row of names", ok, detail)
        results.check("BESTSUBSET's sizes 1-10, ranks 1, R2 and adjusted R2 as regsubsets's (1e-9)",
                      column(subsets, 0) == [float(s) for s in range(1, 11)] and column(subsets, 1) == [1.0] * 10
                      and all_close(column(subsets, 3), R2) and all_close(column(subsets, 4), ADJUSTED_R2),
                      "%r" % [line[:5] for line in subsets])
        validation, press = column(subsets, 9), column(subsets, 8)
        chosen = chosen_rows(subsets)
        results.check("BESTSUBSET's validation error is PRESS / n (1e-12), BIC is BIC (leaps) + n ln(RSS0 / n) "
                      "(1e-12); one chosen row, size 4, at the lowest validation error",
                      all_close(validation, [p / CARS for p in press], 1e-12)
                      and all_close(column(subsets, 7), [b + CARS * math.log(NULL_RSS / CARS)
                                                         for b in column(subsets, 6)], 1e-12)
                      and column(subsets, 10).count(1.0) == 1 and column(subsets, 10).count(0.0) == 9
                      and chosen == [3] and validation[3] == min(validation),
                      "validation %r chosen %r" % (validation, column(subsets, 10)))
        unnamed = tables["no names"]
        results.check("without a row of names: the same numbers, the predictors called X1 ... X10",
                      [line[:11] for line in unnamed] == [line[:11] for line in subsets]
                      and column(unnamed, 11)[0] == "X%d" % (PREDICTORS.index("wt") + 1)
                      and column(unnamed, 11)[-1] == ", ".join("X%d" % (v + 1) for v in range(10)),
                      repr(column(unnamed, 11)))

        which = tables["which"]
        expected_which = [[float(s), 1.0] + [1.0 if name in names.split(", ") else 0.0 for name in PREDICTORS]
                          for s, names in enumerate(NAMES, 1)]
        results.check("Output \"which\": size, rank and regsubsets's which, a 0/1 per predictor",
                      which == expected_which, repr(which))

        coefficients = tables["coefficients"]
        results.check("Output \"coefficients\": 4 columns, the chosen model's terms named first ((Intercept), "
                      "hp, wt, qsec, am), then its coefficients, standard errors and t values as lm's (1e-9)",
                      all(len(line) == 4 for line in coefficients) and column(coefficients, 0) == LM_TERMS
                      and all_close(column(coefficients, 1), LM_COEFFICIENTS)
                      and all_close(column(coefficients, 2), LM_STANDARD_ERRORS)
                      and all_close(column(coefficients, 3), LM_T), repr(coefficients))

        summary = summary_of(tables["summary"])
        results.check("Output \"Summary\": its names; chosen size 4, by the validation error, PRESS; RSS of the "
                      "chosen, full and null models, sigma2 = full RSS / 21 (1e-9); 32 used, none left out (the row "
                      "of names is not counted)",
                      summary is not None and list(summary) == SUMMARY_NAMES
                      and [summary[name] for name in SUMMARY_NAMES[:5]] == [4.0, 0.0, 0.0, 0.0, 0.0]
                      and close(summary["R2 of the chosen model"], R2[3])
                      and close(summary["RSS of the chosen model"], RSS[3])
                      and close(summary["RSS of the full model"], RSS[9])
                      and close(summary["RSS of the null model"], NULL_RSS)
                      and close(summary["sigma2 (Cp's, from the full model)"], RSS[9] / (CARS - 11))
                      and summary["predictors left out as dependent on others"] == 0.0
                      and summary["subsets evaluated"] >= 10.0
                      and summary["observations used"] == 32.0
                      and summary["rows left out (missing values)"] == 0.0, repr(tables["summary"]))

        nbest = tables["nbest"]
        ok, detail = matches_leaps(nbest, RSS_NBEST2, CP_NBEST2, BIC_NBEST2, NAMES_NBEST2)
        results.check("NBest 2: two subsets per size (one of size 10), as regsubsets(nbest = 2)'s (1e-9)",
                      ok and column(nbest, 1) == [1.0, 2.0] * 9 + [1.0], detail)
        results.check("NBest 2 with \"press\": every subset's validation error is its PRESS / n (1e-12)",
                      all_close(column(nbest, 9), [p / CARS for p in column(nbest, 8)], 1e-12),
                      repr(column(nbest, 9)))

        ok, detail = matches_leaps(tables["no intercept"], RSS_NO_INTERCEPT, CP_NO_INTERCEPT, BIC_NO_INTERCEPT,
                                   NAMES_NO_INTERCEPT)
        results.check("Intercept FALSE(): as regsubsets(intercept = FALSE)'s (1e-9)", ok, detail)

        max_size = tables["max size"]
        ok, detail = matches_leaps(max_size[:2], RSS_MAX2, CP_MAX2, BIC_MAX2, NAMES[:2])
        results.check("MaxSize 2: sizes 1 and 2 as regsubsets(nvmax = 2)'s (1e-9), a third row #N/A",
                      ok and max_size[2] == [("error", NOT_AVAILABLE)] * 12, detail + " third %r" % max_size[2][:2])

        for key, word, summary_key, summary_name, summary_value in (
                ("kfold", "kfold 5", "kfold summary", "folds (k-fold)", 5.0),
                ("holdout", "holdout 0.3", "holdout summary", "rows held out (holdout)", 10.0)):
            table = tables[key]
            ranks, errors = column(table, 1), column(table, 9)
            rank_one = [e for r, e in zip(ranks, errors) if r == 1.0]
            others = [e for r, e in zip(ranks, errors) if r != 1.0]
            chosen = chosen_rows(table)
            numbers = [e for e in rank_one if isinstance(e, float)]
            results.check("Validation \"%s\" with NBest 2: the subsets of NBest 2 \"press\"; a positive validation "
                          "error in the 10 rank-1 rows, \"\" (empty text) in the 9 rank-2 rows, the chosen row the "
                          "lowest" % word,
                          [line[:9] for line in table] == [line[:9] for line in nbest]
                          and len(rank_one) == 10 and all(isinstance(e, float) and e > 0 for e in rank_one)
                          and others == [""] * 9 and len(chosen) == 1 and len(numbers) == 10
                          and table[chosen[0]][9] == min(numbers), repr(errors))
            summary = summary_of(tables[summary_key])
            results.check("Validation \"%s\": the summary's %s is %g" % (word, summary_name, summary_value),
                          summary is not None and summary.get(summary_name) == summary_value,
                          repr(tables[summary_key]))
        results.check("Validation \"kfold 5\" with Seed 0 given: the same table as with Seed left out",
                      tables["kfold seed 0"] == tables["kfold"], repr(column(tables["kfold seed 0"], 9)))

        cp = tables["cp"]
        results.check("Criterion \"cp\": the chosen row is size 3 (wt, qsec, am), the lowest Cp",
                      chosen_rows(cp) == [2] and column(cp, 5)[2] == min(column(cp, 5)) and cp[2][11] == NAMES[2]
                      and [line[:10] for line in cp] == [line[:10] for line in subsets], repr(column(cp, 10)))
        coefficients = tables["cp coefficients"]
        results.check("Criterion \"Cp\": Output \"coefficients\" is lm(mpg ~ wt + qsec + am)'s (1e-9), the "
                      "terms named",
                      column(coefficients, 0) == LM_CP_TERMS
                      and all_close(column(coefficients, 1), LM_CP_COEFFICIENTS)
                      and all_close(column(coefficients, 2), LM_CP_STANDARD_ERRORS)
                      and all_close(column(coefficients, 3), LM_CP_T), repr(coefficients))

        missing, less = tables["missing"], tables["less"]
        ok, detail = matches_leaps(less, RSS_TWO_CARS_LESS, [line[5] for line in less], [line[6] for line in less])
        results.check("rows with an empty X cell (car 5's hp) or a text Y cell (car 12's mpg) are left out: the "
                      "table equals the one without those cars, whose RSS are regsubsets's on mtcars[-c(5, 12), ]",
                      ok and missing == less and len(chosen_rows(missing)) == 1, detail)
        missing_summary, less_summary = summary_of(tables["missing summary"]), summary_of(tables["less summary"])
        results.check("with the two cars left out: 30 observations used, 2 rows left out (the two cars; the row "
                      "of names is not counted), the other values those without the cars",
                      missing_summary is not None and less_summary is not None
                      and missing_summary["observations used"] == 30.0
                      and missing_summary["rows left out (missing values)"] == 2.0
                      and less_summary["rows left out (missing values)"] == 0.0
                      and {k: v for k, v in missing_summary.items() if not k.startswith("rows left out")}
                      == {k: v for k, v in less_summary.items() if not k.startswith("rows left out")},
                      "%r %r" % (tables["missing summary"], tables["less summary"]))

        for index, (name, formula) in enumerate(BAD_CASES):
            cell = sheet.getCellByPosition(bad_column, 40 + index)
            results.check("%s: %s is Err:502" % (name, formula.replace(STANDARD, "Y; X")),
                          cell.getError() == ILLEGAL_ARGUMENT, cell.getString())
    finally:
        document.close(True)


# ---- the sample workbook --------------------------------------------------------------

def bestsubset_ranges(sheet):
    """[(formula, array range)] of the sheet's BESTSUBSET array formulas, in reading order."""
    import lo_session
    found, seen = [], set()
    for _, cell in lo_session.formula_cells(sheet):
        formula = cell.getPropertyValue("FormulaLocal")
        if "BESTSUBSET(" not in formula:
            continue
        cursor = sheet.createCursorByRange(cell)
        cursor.collapseToCurrentArray()
        address = cursor.getRangeAddress()
        key = (address.StartColumn, address.StartRow, address.EndColumn, address.EndRow)
        if key in seen:
            continue
        seen.add(key)
        found.append((formula, sheet.getCellRangeByPosition(*key)))
    return found


def check_sample(results, office, source_dir):
    import lo_session
    document = office.load(os.path.join(source_dir, "samples", "bestsubset.ods"))
    try:
        document.calculateAll()
        sheet = document.Sheets.getByIndex(0)
        ranges = bestsubset_ranges(sheet)
        shapes = [(formula, len(table_of(cell_range)), len(table_of(cell_range)[0])) for formula, cell_range in ranges]
        subsets = [r for f, r in ranges if '"' not in f]
        criteria = [(f, r) for f, r in ranges if '"summary"' in f and len(table_of(r)) == 1]
        summaries = [r for f, r in ranges if '"summary"' in f and len(table_of(r)) == 14]
        coefficients = [r for f, r in ranges if '"coefficients"' in f]
        results.check("bestsubset.ods has BESTSUBSET's subsets table, four criteria, a summary and the "
                      "coefficients", len(subsets) == 1 and len(criteria) == 4 and len(summaries) == 1
                      and len(coefficients) == 1, repr(shapes))
        if not (len(subsets) == 1 and len(criteria) == 4 and len(summaries) == 1 and len(coefficients) == 1):
            return
        subsets_address = subsets[0].getRangeAddress()
        helper_column = subsets_address.EndColumn + 1
        errors = [(address, cell.getString()) for address, cell in lo_session.formula_cells(sheet)
                  if cell.getError() and not (cell.getError() == NOT_AVAILABLE
                                              and cell.getCellAddress().Column == helper_column)]
        results.check("bestsubset.ods: no error cell but the #N/A of the chart's helper column", not errors,
                      repr(errors[:8]))

        cars = read_mtcars(source_dir)
        y_formula = [f for f, r in ranges if '"' not in f][0]
        data = sheet.getCellRangeByName("B4:L%d" % (4 + CARS)).getDataArray()
        results.check("bestsubset.ods: the data are samples/mtcars.csv's under a row of names, and Y and X are "
                      "B4:B36 and C4:L36", list(data[0]) == ["mpg"] + list(PREDICTORS)
                      and [tuple(line) for line in data[1:]] == cars
                      and "$B$4:$B$36" in y_formula and "$C$4:$L$36" in y_formula, y_formula)

        table = table_of(subsets[0])
        ok, detail = matches_leaps(table, RSS, CP, BIC_LEAPS, NAMES)
        results.check("bestsubset.ods subsets: RSS, Cp and BIC (leaps) as regsubsets's (1e-9), the predictors "
                      "named; size 4 (hp, wt, qsec, am) chosen", ok and chosen_rows(table) == [3], detail)

        chosen_by = []
        for formula, cell_range in criteria:
            size = cell_outcome(cell_range.getCellByPosition(0, 0))
            address = cell_range.getRangeAddress()
            names = cell_outcome(sheet.getCellByPosition(address.StartColumn + 1, address.StartRow))
            chosen_by.append((size, names))
        expected = [(("value", float(size)), ("text", NAMES[size - 1])) for size in (4, 3, 3, 5)]
        results.check("bestsubset.ods criteria: the validation error chooses 4, Cp 3, BIC 3, adjusted R2 5, "
                      "each beside its predictors", chosen_by == expected
                      and ['"%s"' % word in criteria[i][0] for i, word in ((1, "cp"), (2, "bic"), (3, "adjr2"))]
                      == [True] * 3, repr(chosen_by))

        summary = summary_of(table_of(summaries[0]))
        results.check("bestsubset.ods summary: chosen size 4, 32 cars used, no row left out (the names are not "
                      "counted)",
                      summary is not None and summary[SUMMARY_NAMES[0]] == 4.0
                      and summary["observations used"] == 32.0 and summary["rows left out (missing values)"] == 0.0
                      and close(summary["RSS of the chosen model"], RSS[3]), repr(summary))

        values = table_of(coefficients[0])
        results.check("bestsubset.ods coefficients: room for 11 terms, 4 columns; (Intercept), hp, wt, qsec, am "
                      "named by BESTSUBSET's term column, with lm's coefficients, standard errors and t values "
                      "(1e-9), the other rows empty",
                      len(values) == 11 and all(len(line) == 4 for line in values)
                      and column(values[:5], 0) == LM_TERMS
                      and all_close(column(values[:5], 1), LM_COEFFICIENTS)
                      and all_close(column(values[:5], 2), LM_STANDARD_ERRORS)
                      and all_close(column(values[:5], 3), LM_T)
                      and all(line == ["", "", "", ""] for line in values[5:]), repr(values))

        # The chart: the validation error column and the helper column beside the table, against the size.
        first, last = subsets_address.StartRow + 1, subsets_address.EndRow + 1
        size_range = "$N$%d:$N$%d" % (first, last)
        error_range = "$%s$%d:$%s$%d" % (lo_session.cell_name(0, subsets_address.StartColumn + 9)[:-1], first,
                                         lo_session.cell_name(0, subsets_address.StartColumn + 9)[:-1], last)
        helper_range = "$%s$%d:$%s$%d" % (lo_session.cell_name(0, helper_column)[:-1], first,
                                          lo_session.cell_name(0, helper_column)[:-1], last)
        helper = [cell_outcome(sheet.getCellByPosition(helper_column, r)) for r in range(first - 1, last)]
        charts = sheet.getCharts()
        series = []
        if charts.getCount() == 1:
            chart = charts.getByIndex(0).getEmbeddedObject()
            for chart_type in chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes():
                for item in chart_type.getDataSeries():
                    series.append(tuple(sequence.getValues().getSourceRangeRepresentation()
                                        for sequence in item.getDataSequences()))
        results.check("bestsubset.ods has one chart: the validation error and the chosen size's point against the "
                      "size; the helper column holds the chosen size's error alone",
                      charts.getCount() == 1 and len(series) == 2
                      and size_range in series[0][0] and error_range in series[0][1]
                      and size_range in series[1][0] and helper_range in series[1][1]
                      and helper == [("error", NOT_AVAILABLE)] * 3 + [("value", table[3][9])]
                      + [("error", NOT_AVAILABLE)] * 6, "%r %r" % (series, helper))
    finally:
        document.close(True)
