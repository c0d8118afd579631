/*
 * distributions.h: distribution functions the methods share.
 */
#ifndef STATGPU_MATH_DISTRIBUTIONS_H
#define STATGPU_MATH_DISTRIBUTIONS_H

/* The standard normal quantile: Wichura's AS 241 (PPND16), about 1e-16
 * relative accuracy, as R's qnorm. 0 < p < 1. */
double sg_qnorm(double p);

#endif
