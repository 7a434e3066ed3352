// A creator's tools, with the operator's wallet: create a feed, publish an entry. Each request is signed here with
// a fresh sign-in (wallet.ts); the key never leaves the process.
import { z } from 'zod'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { usdcDecimal } from '../../lib/money.ts'
import { segment } from '../api.ts'
import type { OperatorWallet } from '../wallet.ts'
import { answer, id, units, type ToolContext } from './common.ts'
import { CreateFeed } from '../../models/feed.ts'
import { CreateEntry, SUPPORTED_MIME_TYPES } from '../../models/entry.ts'
import { listOf, textOf } from './model-fields.ts'

const feed = CreateFeed.properties
const entry = CreateEntry.properties
// The API takes an image as a data URI or base64 too (up to 10 MB); a tool takes a URL or a CID only, so a tool call
// never carries an image's bytes.
const IMAGE_REFERENCE_MAX = 4096

export function registerPublishingTools(server: McpServer, ctx: ToolContext & { wallet: OperatorWallet }): void {
  const { api, wallet } = ctx
  const post = async (path: string, body: unknown) =>
    api.json(path, {
      method: 'POST',
      expect: 201,
      headers: { 'content-type': 'application/json', ...(await wallet.signIn()) },
      body: JSON.stringify(body),
    })

  server.registerTool(
    'create_feed',
    {
      title: 'Create a feed',
      description:
        `Creates a feed owned by the operator's wallet (${wallet.account.address}); a wallet has at ` +
        `most 10 active feeds. Publish into it with create_entry. A feed shows in search_feeds once it ` +
        `has an entry.`,
      inputSchema: {
        name: textOf(feed.name).describe(`${feed.name.minLength}-${feed.name.maxLength} characters`),
        description: textOf(feed.description).optional(),
        tags: listOf(feed.tags).optional().describe(`up to ${feed.tags.maxItems}`),
        category_id: id('category id').optional().describe('a category id (see list_categories)'),
        image_url: z
          .string()
          .max(IMAGE_REFERENCE_MAX)
          .optional()
          .describe('a cover image: an http(s) URL, or the CID of an image stored here'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (input) => answer({ feed: await post('/v1/feeds', input) }),
  )

  server.registerTool(
    'create_entry',
    {
      title: 'Publish an entry',
      description:
        "Publishes an entry in a feed of the operator's wallet: give its content as text (text/*, " +
        'JSON, SVG) or as base64 (any supported type). With a price (USDC smallest units, e.g. "10000" = ' +
        '0.01 USDC) the entry is paid and sold over x402; without one it is free. A price below what one ' +
        'settlement costs on the network (about 0.0014 USDC on Base) is published with a warning: sell a pass ' +
        'instead. The content can never change after.',
      inputSchema: {
        feed_id: id('feed id'),
        mime_type: z.enum(SUPPORTED_MIME_TYPES).describe("the content's type"),
        text: z.string().optional().describe('the content as text (UTF-8); or give content_base64'),
        content_base64: z.string().optional().describe('the content in base64; or give text'),
        title: textOf(entry.title).optional(),
        description: textOf(entry.description).optional(),
        tags: listOf(entry.tags).optional().describe(`up to ${entry.tags.maxItems}`),
        price: units('the price in USDC smallest units: the entry is paid (omit, or "0", for a free entry)').optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async ({ feed_id, text, content_base64, price, ...fields }) => {
      if ((text === undefined) === (content_base64 === undefined))
        throw new Error('give the content as exactly one of text or content_base64')
      const paid = price !== undefined && BigInt(price) > 0n
      const entry = await post(`/v1/feeds/${segment(feed_id)}/entries`, {
        ...fields,
        content_base64: content_base64 ?? Buffer.from(text!, 'utf8').toString('base64'),
        is_free: !paid,
        ...(paid ? { price: { amount: price, currency: 'USDC' } } : {}),
      })
      // A price below the network's settlement cost is published, with the API's warning (price_warning): said first
      // here as well, so that an agent relays it rather than finding it deep in the entry.
      const { price_warning: warning, ...published } = entry
      return answer({
        ...(warning ? { warning: warning.message } : {}),
        entry: paid ? { ...published, price_usdc: usdcDecimal(price!) } : published,
      })
    },
  )
}
