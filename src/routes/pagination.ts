// Cursor pagination: {data, pagination: {page_size, next_page_token, has_more}}. Tokens are opaque, signed with
// the server key and bound to one listing, so a forged or foreign token is refused (422 INVALID_PAGE_TOKEN).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { t } from 'elysia'
import { DomainError } from '../domain/errors.ts'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../models/common.ts'

export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE }

export const pageQuery = {
  page_size: t.Optional(t.String({ description: `items per page, 1..${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE})` })),
  page_token: t.Optional(t.String({ description: 'next_page_token of the previous page' })),
}

/**
 * A read memo key for a list's query: the values of its known parameters only, so parameters the route ignores do
 * not make new keys (nor does the clock: results that depend on it say when they go stale, see readMemo).
 */
export const queryKey = (query: Record<string, unknown>, names: readonly string[]): string =>
  JSON.stringify(names.map((name) => query[name] ?? null))

export function pageSize(raw: string | undefined, max = MAX_PAGE_SIZE): number {
  if (raw === undefined || raw === '') return DEFAULT_PAGE_SIZE
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new DomainError('INVALID_PARAMETER', 'invalid page_size', `page_size must be an integer from 1 to ${max}`)
  }
  return Number(raw)
}

export function pageTokens(key: Uint8Array) {
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, 16)
  return {
    encode(scope: string, cursor: unknown): string {
      const payload = Buffer.from(JSON.stringify({ s: scope, c: cursor })).toString('base64url')
      return `${payload}.${sign(payload).toString('base64url')}`
    },
    /** The cursor inside a token minted for `scope`; throws INVALID_PAGE_TOKEN otherwise. */
    decode<T>(scope: string, token: string | undefined): T | undefined {
      if (token === undefined || token === '') return undefined
      const invalid = () =>
        new DomainError('INVALID_PAGE_TOKEN', 'page_token is invalid', 'use the next_page_token of the previous response')
      const [payload, mac, extra] = token.split('.')
      if (!payload || !mac || extra !== undefined) throw invalid()
      const expected = sign(payload)
      const given = Buffer.from(mac, 'base64url')
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid()
      let parsed: { s?: unknown; c?: unknown }
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
      } catch {
        throw invalid()
      }
      if (parsed.s !== scope) throw invalid()
      return parsed.c as T
    },
  }
}
export type PageTokens = ReturnType<typeof pageTokens>

/** Fetch limit+1 rows: next_page_token is null exactly when nothing follows. */
export function page<T, C>(rows: T[], limit: number, tokens: PageTokens, scope: string, cursorOf: (last: T) => C) {
  const hasMore = rows.length > limit
  const data = hasMore ? rows.slice(0, limit) : rows
  return {
    data,
    pagination: {
      page_size: data.length,
      next_page_token: hasMore ? tokens.encode(scope, cursorOf(data[data.length - 1])) : null,
      has_more: hasMore,
    },
  }
}
