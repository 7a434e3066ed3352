// /v1/openapi.json and the API explorer at /v1/docs, served offline: the Swagger UI files are embedded.
import { Elysia } from 'elysia'
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import explorerScript from '../pages/assets/explorer.js' with { type: 'text' }
import { openApiDocument } from '../edge/openapi.ts'
import { WALLET_AUTH_HEADERS as HEADER } from '../models/auth.ts'

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

/** `app` is the whole application (its routes are documented as they are at the first request). */
export const docsRoutes = (version: string, app: () => Elysia<any, any, any, any, any, any, any>, publicUrl: () => string) => {
  const documents = new Map<string, string>()
  const document = () => {
    const url = publicUrl()
    let text = documents.get(url)
    if (text === undefined) {
      text = JSON.stringify(
        openApiDocument(app(), { title: TITLE, version, description: DESCRIPTION, publicUrl: url, securitySchemes: SECURITY_SCHEMES }),
      )
      documents.set(url, text)
    }
    return text
  }
  return new Elysia()
    .get('/v1/openapi.json', () => new Response(document(), { headers: { 'content-type': 'application/json; charset=utf-8' } }), {
      detail: { hide: true },
    })
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
