// /v1/openapi.json (also at /openapi.json and /.well-known/openapi.json), the API explorer at /v1/docs, served offline
// (the Swagger UI files are embedded), and /llms.txt.
import { Elysia } from 'elysia'
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import explorerScript from '../pages/assets/explorer.js' with { type: 'text' }
import { openApiDocument } from '../edge/openapi.ts'
import { WALLET_AUTH_HEADERS as HEADER } from '../models/auth.ts'
import { discovery } from '../chain/x402/discovery.ts'
import type { NetworkInfo } from '../config.ts'
import { llmsRoutes } from './llms.ts'

const ASSETS = '/v1/docs/assets'
const TITLE = 'Trellis API'
const DESCRIPTION = 'Content-feed marketplace: wallet-signed feeds and entries on private IPFS, paid entries over x402 (USDC).'

const SECURITY_SCHEMES = {
  walletAddress: { type: 'apiKey', in: 'header', name: HEADER.address, description: 'Your 0x address.' },
  walletSignature: {
    type: 'apiKey',
    in: 'header',
    name: HEADER.signature,
    description: 'personal_sign of the message from POST /v1/auth/nonce.',
  },
  walletMessage: { type: 'apiKey', in: 'header', name: HEADER.message, description: 'That message (or its base64).' },
  walletTimestamp: { type: 'apiKey', in: 'header', name: HEADER.timestamp, description: 'Unix seconds, now.' },
  adminApiKey: { type: 'apiKey', in: 'header', name: 'admin-api-key', description: 'TRELLIS_ADMIN_KEY (category administration).' },
}

const PAGE =
  `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${TITLE}</title>
  <meta name="description" content="${DESCRIPTION}">
  <link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
</head>
<body>
  <div id="wallet-bar" class="wallet-bar" hidden><button type="button" id="connect-wallet" ` +
  `hidden>Connect wallet to sign requests</button> <span id="wallet-status"></span></div>
  <div id="swagger-ui"></div>
  <script src="${ASSETS}/swagger-ui-bundle.js"></script>
  <script src="${ASSETS}/explorer.js"></script>
</body>
</html>`

/** Our script and Swagger UI's only; Swagger UI sets styles inline and shows data: images. */
const EXPLORER_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const asset = (path: string, type: string) => () =>
  new Response(Bun.file(path), { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } })

/** For agents reading the document: what is sold and how to pay, in a few words (llms.txt says more). */
const GUIDANCE =
  'Paid entries and feed passes are sold over x402 (USDC): call a paid operation without payment, get 402 with the ' +
  'requirement (v1 JSON body, v2 PAYMENT-REQUIRED header), pay with an x402 client (X-PAYMENT or PAYMENT-SIGNATURE). ' +
  'Find what is for sale at /discovery/resources (x402 v1), /x402/v2/discovery/resources (v2) or /.well-known/x402. ' +
  'Writes are signed with a wallet (POST /v1/auth/nonce); a buyer reads again signed, or with SIGN-IN-WITH-X. MCP: POST /mcp.'

/**
 * `app` is the whole application (its routes are documented as they are at the first request). The document is served
 * at /v1/openapi.json, and at /openapi.json and /.well-known/openapi.json where indexers look for it.
 */
export const docsRoutes = (
  version: string,
  app: () => Elysia<any, any, any, any, any, any, any>,
  publicUrl: () => string,
  networks: readonly NetworkInfo[],
) => {
  const paymentInfo = discovery(networks).paymentInfo()
  const documents = new Map<string, string>()
  const document = () => {
    const url = publicUrl()
    let text = documents.get(url)
    if (text === undefined) {
      const extensions = { document: { 'x-discovery': { llmsTxtUrl: `${url}/llms.txt` } }, info: { 'x-guidance': GUIDANCE } }
      const info = { title: TITLE, version, description: DESCRIPTION, publicUrl: url, securitySchemes: SECURITY_SCHEMES }
      text = JSON.stringify(openApiDocument(app(), { ...info, paymentInfo, extensions }))
      documents.set(url, text)
    }
    return text
  }
  const served = () => new Response(document(), { headers: { 'content-type': 'application/json; charset=utf-8' } })
  return new Elysia()
    .use(llmsRoutes(publicUrl, networks))
    .get('/v1/openapi.json', served, { detail: { hide: true } })
    .get('/openapi.json', served, { detail: { hide: true } })
    .get('/.well-known/openapi.json', served, { detail: { hide: true } })
    .get(
      '/v1/docs',
      () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': EXPLORER_CSP } }),
      { detail: { hide: true } },
    )
    .get(
      `${ASSETS}/explorer.js`,
      () => new Response(explorerScript, { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' } }),
      { detail: { hide: true } },
    )
    .get(`${ASSETS}/swagger-ui-bundle.js`, asset(bundlePath, 'application/javascript; charset=utf-8'), { detail: { hide: true } })
    .get(`${ASSETS}/swagger-ui.css`, asset(cssPath, 'text/css; charset=utf-8'), { detail: { hide: true } })
}
