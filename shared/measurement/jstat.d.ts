/** The parts of jStat (https://jstat.github.io) that geo-lift evaluation uses; the package ships no types. */
declare module 'jstat' {
  interface OlsModel {
    nobs: number;
    df_model: number;
    df_resid: number;
    coef: number[];
    predict: number[];
    resid: number[];
    R2: number;
    SSR: number;
    t: { sigmaHat: number };
  }
  interface Distribution {
    cdf(x: number, ...params: number[]): number;
    inv(p: number, ...params: number[]): number;
  }
  const jStat: {
    models: { ols(endog: number[], exog: number[][]): OlsModel };
    studentt: Distribution;
    chisquare: Distribution;
    normal: Distribution;
    transpose(m: number[][]): number[][];
    multiply(a: number[][], b: number[][]): number[][];
    inv(m: number[][]): number[][];
    dot(a: number[], b: number[]): number;
    mean(xs: number[]): number;
    sum(xs: number[]): number;
    variance(xs: number[], sample?: boolean): number;
    corrcoeff(a: number[], b: number[]): number;
  };
  export = jStat;
}
