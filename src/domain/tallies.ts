// Periods and money helpers shared by the statistics and the leaderboards. Money is bigint throughout.
export const PERIODS = { '1d': 86_400, '7d': 7 * 86_400, '30d': 30 * 86_400, all: Infinity } as const
export type Period = keyof typeof PERIODS

/** Integer average as a string; "0" when there is nothing to divide. */
export const floorDiv = (a: bigint, b: number): string => (b > 0 ? (a / BigInt(b)).toString() : '0')

/** Descending order for bigints, for sort comparators. */
export const compareBig = (a: bigint, b: bigint): number => (a > b ? -1 : a < b ? 1 : 0)
