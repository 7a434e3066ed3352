// Books that must balance: what the chain moved to an owner equals what the ledger says it earned.
import { expect } from 'bun:test'
import type { Address } from 'viem'
import { call } from '../../dev/api.ts'
import { trellis } from '../../dev/server.ts'

/** Every ledger row paid to `payTo`, through the public API (all pages). */
export async function ledgerRows(url: string, filter: string): Promise<any[]> {
  const rows: any[] = []
  let token: string | null = null
  do {
    const page: any = await call(url, 'GET', `/v1/transactions?${filter}&page_size=100${token ? `&page_token=${token}` : ''}`)
    if (page.status !== 200) throw new Error(`ledger: ${page.status} ${page.text}`)
    rows.push(...page.body.transactions)
    token = page.body.pagination.next_page_token
  } while (token)
  return rows
}

export const ledgerSum = async (url: string, filter: string): Promise<bigint> =>
  (await ledgerRows(url, filter)).reduce((sum, row) => sum + BigInt(row.amount), 0n)

/** The owner's on-chain balance moved by exactly the sum of the owner's ledger rows since `before`. */
export async function expectBooksBalanced(
  url: string,
  balanceOf: (a: Address) => Promise<bigint>,
  owner: Address,
  before: bigint,
): Promise<bigint> {
  const moved = (await balanceOf(owner)) - before
  expect(moved).toBe(await ledgerSum(url, `pay_to=${owner}`))
  return moved
}

/** A gauge from /metrics. */
export async function gauge(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  if (!line) throw new Error(`no ${name} in /metrics`)
  return Number(line.split(' ')[1])
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

/** `trellis verify-ledger` (from source) on a data directory: its exit code and JSON report. */
export async function verifyLedger(dataDir: string, env: Record<string, string>): Promise<{ code: number; report: any; stderr: string }> {
  const { code, json, stderr } = await trellis(['verify-ledger'], dataDir, env)
  return { code, report: json, stderr }
}
