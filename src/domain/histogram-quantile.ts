/**
 * A quantile of a Prometheus histogram from its cumulative buckets, the way
 * `histogram_quantile` reads one: find the bucket the rank falls in and interpolate
 * linearly inside it (from 0 for the first bucket). A rank in the `+Inf` bucket answers the
 * highest finite bound: the histogram cannot tell more. No observation: null.
 */

/** One bucket: its upper bound (`Infinity` for `+Inf`) and the observations at or below it. */
export interface Bucket {
  le: number;
  count: number;
}

export function histogramQuantile(q: number, buckets: readonly Bucket[]): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const b of sorted) {
    if (b.count >= rank) {
      if (b.le === Number.POSITIVE_INFINITY) return lowerBound;
      const inBucket = b.count - lowerCount;
      if (inBucket <= 0) return b.le;
      return lowerBound + ((b.le - lowerBound) * (rank - lowerCount)) / inBucket;
    }
    if (b.le !== Number.POSITIVE_INFINITY) lowerBound = b.le;
    lowerCount = b.count;
  }
  return lowerBound;
}
