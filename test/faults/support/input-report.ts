/** The fault suite prints its figures, one line each, prefixed `[fault]`, for the reliability notes. */
export function figure(line: string): void {
  // eslint-disable-next-line no-console -- printing the figure is the point
  console.log(`[fault] ${line}`);
}
