// The tools that need no key (offered everywhere, /mcp included): find feeds, list categories and entries, read an
// entry (a free one's content inline), and read a paid entry's price and x402 requirements from its 402, with its
// feed's pass (the choice between one entry and the whole feed for a time).
import { z } from 'zod'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { usdcDecimal } from '../../lib/money.ts'
import { apiError, segment, withQuery } from '../api.ts'
import { showContent } from '../content.ts'
import { challengeOf, priceTerms } from '../challenge.ts'
import { answer, id, inputSchema, pageSize, pageToken, paged, passTerms, tags, type ToolContext } from './common.ts'
import { CreateCategory } from '../../models/category.ts'
import { FeedSearch } from '../../models/feed.ts'
import { SearchText } from '../../models/search.ts'
import { textOf } from './model-fields.ts'

const READ_ONLY = { readOnlyHint: true, openWorldHint: true } as const

// The input schemas, made once (a server is made per request on /mcp; a zod schema costs to build). Where the API
// bounds a parameter, the bound is the model's; category and owner, which the API leaves unbounded, get the tool's own.
const SEARCH_FEEDS = inputSchema({
  text: textOf(FeedSearch).min(1).optional().describe('words the name or description contains (case-insensitive for A-Z)'),
  category: z.string().min(1).max(255).optional().describe('a category id or name'),
  tags: tags.optional().describe('feeds with any of these tags'),
  owner: z.string().min(1).max(100).optional().describe("the owner's wallet address (0x…) or wallet id"),
  page_size: pageSize,
  page_token: pageToken,
})
const SEARCH_ENTRIES = inputSchema({
  text: textOf(SearchText).describe('the words to find, every one (English stemming; quotes and operators are read as spaces)'),
  category: z.string().min(1).max(255).optional().describe("a category id or name: entries of that category's feeds"),
  page_size: pageSize,
  page_token: pageToken,
})
// A part of a name is no longer than a name.
const LIST_CATEGORIES = inputSchema({
  text: textOf(CreateCategory.properties.name).optional().describe('part of the name'),
  page_size: pageSize,
  page_token: pageToken,
})
const LIST_ENTRIES = inputSchema({
  feed_id: id('feed id'),
  is_free: z.boolean().optional().describe('only free (true) or only paid (false) entries'),
  page_size: pageSize,
  page_token: pageToken,
})
const ONE_ENTRY = inputSchema({ feed_id: id('feed id'), entry_id: id('entry id') })

export const entryPath = (feedId: string, entryId: string) => `/v1/feeds/${segment(feedId)}/entries/${segment(entryId)}`

/** An entry as listed, with its price also in decimal USDC (the price itself stays the integer string). */
const withUsdc = <T extends { price?: string }>(entry: T) =>
  typeof entry.price === 'string' && /^\d+$/.test(entry.price) ? { ...entry, price_usdc: usdcDecimal(entry.price) } : entry

/** A search hit as search_entries gives it: the entry's fields a choice needs, its feed's name, the snippet. */
const searchHit = (hit: { snippet?: string; feed?: { name?: string }; entry?: Record<string, unknown> | null }) => {
  const e = hit.entry ?? {}
  return withUsdc({
    id: e.id,
    feed_id: e.feed_id,
    feed_name: hit.feed?.name,
    title: e.title,
    description: e.description,
    tags: e.tags,
    mime_type: e.mime_type,
    is_free: e.is_free,
    price: e.price as string | undefined,
    snippet: hit.snippet,
  })
}

export function registerReadingTools(server: McpServer, ctx: ToolContext): void {
  const { api } = ctx

  /** The feed's pass on sale and where to buy it, or null (none on sale; an unknown feed is the entry's own 404). */
  const passOnSale = async (feedId: string) => {
    const path = `/v1/feeds/${segment(feedId)}/pass`
    const response = await api.send(path)
    if (response.status !== 200) {
      await response.body?.cancel()
      return null
    }
    const terms = passTerms(await response.json())!
    const resource = `${api.base}${path}/purchases`
    return { ...terms, resource, how_to_buy: ctx.wallet ? 'buy_pass' : `POST ${resource} with an x402 client` }
  }

  server.registerTool(
    'search_feeds',
    {
      title: 'Search feeds',
      description:
        'Find active feeds (with at least one entry) on this Trellis marketplace, newest first: by ' +
        'words in their name or description, by category (id or name: see list_categories), by tags (any ' +
        'of them), by owner. Each feed has its id, name, description, tags, category_id, counts, and pass: ' +
        'the pass on sale (every paid entry of the feed for duration_s, for amount USDC smallest units) or ' +
        'null; list its entries with list_entries.',
      inputSchema: SEARCH_FEEDS,
      annotations: READ_ONLY,
    },
    async (input) => {
      const body = await api.json(
        withQuery('/v1/feeds', {
          search: input.text,
          category: input.category,
          tags: input.tags,
          owner_id: input.owner,
          page_size: input.page_size,
          page_token: input.page_token,
        }),
      )
      return paged(
        'feeds',
        body,
        (body.data ?? []).map((feed: { pass?: any }) => ({ ...feed, pass: passTerms(feed.pass) })),
      )
    },
  )

  server.registerTool(
    'search_entries',
    {
      title: 'Search entries',
      description:
        'Full-text search of the active entries on this marketplace, the most relevant first: their titles, ' +
        'descriptions and tags, and the content of free text, Markdown, HTML and JSON entries (never a paid ' +
        "entry's content). Each hit has the entry's id, feed_id, feed_name, title, description, tags, mime_type, " +
        'is_free, price (price_usdc in decimal USDC) and a snippet with the matched words between « and »; read ' +
        'one with get_entry.',
      inputSchema: SEARCH_ENTRIES,
      annotations: READ_ONLY,
    },
    async (input) => {
      const body = await api.json(
        withQuery('/v1/search', {
          q: input.text,
          type: 'entry',
          category: input.category,
          page_size: input.page_size,
          page_token: input.page_token,
        }),
      )
      return paged('entries', body, (body.data ?? []).map(searchHit))
    },
  )

  server.registerTool(
    'list_categories',
    {
      title: 'List categories',
      description: 'The categories feeds are filed under, by name (their ids and names work as search_feeds category).',
      inputSchema: LIST_CATEGORIES,
      annotations: READ_ONLY,
    },
    async (input) =>
      paged(
        'categories',
        await api.json(withQuery('/v1/categories', { search: input.text, page_size: input.page_size, page_token: input.page_token })),
      ),
  )

  server.registerTool(
    'list_entries',
    {
      title: 'List the entries of a feed',
      description:
        "A feed's active entries, newest first: id, title, description, tags, mime_type, is_free, and " +
        'price (USDC smallest units as a string; price_usdc in decimal USDC). Read one with get_entry; a ' +
        "paid one's payment terms with get_price.",
      inputSchema: LIST_ENTRIES,
      annotations: READ_ONLY,
    },
    async (input) => {
      const body = await api.json(
        withQuery(`/v1/feeds/${segment(input.feed_id)}/entries`, {
          is_free: input.is_free,
          page_size: input.page_size,
          page_token: input.page_token,
        }),
      )
      return paged('entries', body, (body.data ?? []).map(withUsdc))
    },
  )

  server.registerTool(
    'get_entry',
    {
      title: 'Read an entry',
      description:
        "An entry's record and, when it may be read, its content: text and JSON inline, a small image as an image, " +
        'anything else (audio, video, PDF, large items) as its size and a download link valid one hour. ' +
        'A paid entry answers with its price instead of its content' +
        (ctx.wallet
          ? ', unless this wallet owns or bought it, or holds a pass to its feed (buy it with buy_entry, or the pass with buy_pass)'
          : ' (this server holds no wallet: buy it with an x402 client at the resource get_price names)') +
        '.',
      inputSchema: ONE_ENTRY,
      annotations: READ_ONLY,
    },
    async ({ feed_id, entry_id }) => {
      const path = entryPath(feed_id, entry_id)
      let response = await api.send(path)
      // A paid entry: its owner, or a past buyer, reads it signed (one sign-in, no payment).
      if (response.status === 402 && ctx.wallet) {
        const signed = await api.send(path, { headers: await ctx.wallet.signIn() })
        if (signed.status === 200) {
          await response.body?.cancel()
          response = signed
        } else await signed.body?.cancel()
      }
      if (response.status === 402) {
        const terms = priceTerms(await challengeOf(response))
        return answer({
          entry: { id: entry_id, feed_id },
          is_free: false,
          readable: false,
          price: terms,
          how_to_read: ctx.wallet ? 'buy_entry' : `pay with an x402 client at ${terms.resource}`,
        })
      }
      if (response.status !== 200) throw await apiError(response)
      const entry = await response.json()
      // A deleted entry keeps its record, without content_url.
      if (typeof entry.content_url !== 'string')
        return answer({ entry: withUsdc(entry), readable: false, reason: 'the entry is no longer available' })
      const shown = await showContent(api, entry.content_url, entry.mime_type, entry.content_url, ctx.inline)
      return answer({ entry: withUsdc(entry), readable: true, content: shown.about }, shown.blocks)
    },
  )

  server.registerTool(
    'get_price',
    {
      title: 'Get the price and x402 terms of an entry',
      description:
        'What reading an entry costs: for a paid entry, the x402 payment requirement its 402 answer ' +
        "gives (amount in USDC smallest units as a string, and in decimal USDC; the token's address, the " +
        'network, the address paid, the resource URL to pay at, and every requirement as sent); for a ' +
        'free entry, amount "0". With it, pass: the feed\'s pass on sale (amount, duration, the URL to buy it at with ' +
        'POST) or null, for choosing between this entry and every paid entry of the feed for a time. Nothing is paid.',
      inputSchema: ONE_ENTRY,
      annotations: READ_ONLY,
    },
    async ({ feed_id, entry_id }) => {
      const [response, pass] = await Promise.all([api.send(entryPath(feed_id, entry_id)), passOnSale(feed_id)])
      if (response.status === 200) {
        // 200 for anyone: free, or deleted (its record stays, without content_url: nothing to buy).
        const entry = await response.json()
        if (typeof entry.content_url !== 'string')
          return answer({ feed_id, entry_id, available: false, reason: 'the entry is no longer available: nothing to buy', pass })
        return answer({ feed_id, entry_id, is_free: true, amount: '0', amount_usdc: usdcDecimal(0n), available: true, pass })
      }
      if (response.status !== 402) throw await apiError(response)
      return answer({ feed_id, entry_id, is_free: false, ...priceTerms(await challengeOf(response)), pass })
    },
  )
}
