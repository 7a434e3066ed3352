// How numbers, money, times and media types read on a page.
import { usdcDecimal } from '../lib/money.ts'

/** "0.25 USDC", "12 USDC", "0.000001 USDC": the decimal without trailing zeros (at least two places). */
export function usdc(amount: bigint | string): string {
  const [whole, fraction] = usdcDecimal(amount).split('.') as [string, string]
  const trimmed = fraction.replace(/0+$/, '')
  return `${whole}.${trimmed.padEnd(2, '0')} USDC`
}

/** A date as YYYY-MM-DD (UTC). */
export const day = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString().slice(0, 10)

/** 0x1234…abcd */
export const shortAddress = (address: string): string => `${address.slice(0, 6)}…${address.slice(-4)}`

const KINDS: [RegExp, string][] = [
  [/^text\/html\b/, 'HTML'],
  [/^text\//, 'Text'],
  [/^application\/(.+\+)?json\b/, 'JSON'],
  [/^image\//, 'Image'],
  [/^audio\//, 'Audio'],
  [/^video\//, 'Video'],
  [/^application\/pdf\b/, 'PDF'],
]

/** What a person calls the content of this media type. */
export function mediaKind(mimeType: string): string {
  const type = mimeType.toLowerCase()
  for (const [pattern, kind] of KINDS) if (pattern.test(type)) return kind
  return 'File'
}

/** A whole count with thousands separated ("12,345"). */
export const count = (n: number | bigint | string): string => BigInt(n).toLocaleString('en-US')
