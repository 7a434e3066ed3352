// A price as a request gives it ({amount, currency, network}), read once for everything sold: entries and passes.
import type { Price } from '../models/entry.ts'
import { MAX_AMOUNT } from '../lib/money.ts'
import { fail } from './errors.ts'

/** The amount in USDC's smallest unit, or INVALID_PRICE naming what is wrong. `what`: the thing sold, for the message. */
export function parsePrice(input: Price | null | undefined, network: string, what: string): bigint {
  if (!input || typeof input !== 'object') return fail('INVALID_PRICE', `${what} needs price {amount, currency: "USDC"}`)
  const raw = typeof input.amount === 'number' && Number.isSafeInteger(input.amount) ? String(input.amount) : input.amount
  if (typeof raw !== 'string' || !/^\d{1,19}$/.test(raw))
    fail('INVALID_PRICE', 'price.amount must be a string of digits in the smallest unit (1000000 = 1 USDC)')
  const amount = BigInt(raw as string)
  if (amount <= 0n || amount > MAX_AMOUNT) fail('INVALID_PRICE', 'price.amount must be greater than 0')
  if (input.currency !== undefined && input.currency.toUpperCase() !== 'USDC') fail('INVALID_PRICE', 'price.currency must be USDC')
  if (input.network !== undefined && input.network !== network)
    fail('INVALID_PRICE', `price.network must be ${network}, the network of this server`)
  return amount
}
