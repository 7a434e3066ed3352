// /llms.txt: the API described for agents (the llms.txt proposal, llmstxt.org: a title, a summary, then sections of
// links in Markdown): what is sold, where to find it, how to pay, how to sign in, and the MCP endpoint. Made once per
// public URL from what the server is configured with.
import { Elysia } from 'elysia'
import type { NetworkInfo } from '../config.ts'
import { discovery, V2_DISCOVERY_BASE } from '../chain/x402/discovery.ts'
import { WALLET_AUTH_HEADERS as HEADER } from '../models/auth.ts'
import { READING_TOOLS, WALLET_TOOLS } from '../mcp/server.ts'

/** "base (eip155:8453, chain id 8453, USDC 0x8335…)" for each network sold on. */
const soldOn = (networks: readonly NetworkInfo[]) =>
  networks.map((n) => `${n.name} (${n.caip2}, chain id ${n.chainId}, USDC ${n.usdcAddress})`).join('; ')

export function llmsText(origin: string, networks: readonly NetworkInfo[]): string {
  const list = discovery(networks).networks.join(', ')
  return `# Trellis

> A content-feed marketplace: creators publish feeds of entries (text, JSON, images, audio, video, PDF) on private \
IPFS, free or paid in USDC over x402, on any of: ${soldOn(networks)}. What is sold: each \
paid entry (its record with a signed URL of its bytes, or the bytes themselves) and, for a feed that offers one, a pass \
to every paid entry of the feed for a time.

All API paths start with /v1 and speak JSON. Amounts are strings of USDC's smallest unit (6 decimals: 1000000 = 1 USDC).

## Find what is for sale

- [x402 discovery list, v1](${origin}/discovery/resources): passes on sale, then paid entries, each with its payment \
requirement (\`limit\`, \`offset\`); what the x402 package's \`useFacilitator({ url: "${origin}" }).list()\` reads
- [x402 discovery list, v2](${origin}${V2_DISCOVERY_BASE}/discovery/resources): the same in x402 v2, each item with its \
bazaar declaration (method, route, what it answers), then the MCP tools below as items of type mcp (free); filters \
\`type\` (http or mcp), \`payTo\` (a seller's address), \`network\`, \`scheme\`, \`extensions\`; \
\`withBazaar(new HTTPFacilitatorClient({ url: "${origin}${V2_DISCOVERY_BASE}" })).extensions.bazaar.listResources()\` \
reads it
- [x402 bazaar search](${origin}/discovery/search?query=weather): passes and paid entries found by words, as v2 items \
(\`query\`, the list's filters, \`limit\`, \`cursor\`); the same client's \`.search({ query })\` reads it
- [x402 manifest](${origin}/.well-known/x402): the first of them with price, network and token, then the MCP tools \
(the x402 draft well-known-discovery)
- [OpenAPI document](${origin}/openapi.json): every operation; paid ones carry \`x-payment-info\`
- [Search](${origin}/v1/search?q=weather): feeds and entries by words

## Pay (x402)

1. Call a paid URL without payment: GET an entry (\`/v1/feeds/{feed_id}/entries/{entry_id}\`, or \`.../content\` for its \
bytes), or POST a feed's pass purchase (\`/v1/feeds/{feed_id}/pass/purchases\`).
2. The answer is 402 with one requirement per network (${list}): the x402 v1 ones in the JSON body, the v2 ones in \
the PAYMENT-REQUIRED header (base64), \
with \`extensions.bazaar\` (how to call it) and \`extensions["sign-in-with-x"]\`.
3. On the network you hold USDC on, sign an EIP-3009 transferWithAuthorization of exactly the price to \`payTo\` (its \
requirement's \`asset\`, with the EIP-712 name and version in its \`extra\`) and send \
the same request again with X-PAYMENT (v1) or PAYMENT-SIGNATURE (v2). Any x402 client does this (\`@x402/fetch\`, \
\`x402-fetch\`).
4. The answer carries the settlement in X-PAYMENT-RESPONSE or PAYMENT-RESPONSE; an entry's record has \`content_url\`.

## Sign in

- Writes (feeds, entries, access links, wallet profile) are signed: POST ${origin}/v1/auth/nonce with \
\`{"wallet_address": "0x…"}\`, sign the returned message (personal_sign), and send \`${HEADER.address}\`, \
\`${HEADER.signature}\`, \`${HEADER.message}\` (base64 when it has new lines) and \`${HEADER.timestamp}\`.
- A buyer reads again without paying: signed the same way, or with the SIGN-IN-WITH-X header answering the 402's \
sign-in-with-x challenge (x402's sign-in-with-x extension).

## MCP

- [MCP endpoint](${origin}/mcp): POST, Streamable HTTP, no key; tools: ${READING_TOOLS.join(', ')}.
- \`trellis mcp\` (stdio) holds an operator's wallet and adds ${WALLET_TOOLS.join(', ')}.

## Optional

- [API explorer](${origin}/v1/docs)
`
}

export const llmsRoutes = (publicUrl: () => string, networks: readonly NetworkInfo[]) => {
  const texts = new Map<string, string>()
  return new Elysia().get(
    '/llms.txt',
    () => {
      const origin = publicUrl()
      let text = texts.get(origin)
      if (text === undefined) texts.set(origin, (text = llmsText(origin, networks)))
      return new Response(text, { headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'public, max-age=3600' } })
    },
    { detail: { hide: true } },
  )
}
