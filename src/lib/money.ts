// Money is integer smallest units end to end (USDC has 6 decimals); never a float.
export const MAX_AMOUNT = (1n << 63n) - 1n

export function usdcDecimal(amount: bigint | string): string {
  const value = BigInt(amount)
  const sign = value < 0n ? '-' : ''
  const abs = value < 0n ? -value : value
  return `${sign}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, '0')}`
}
