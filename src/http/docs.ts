// /v1/openapi.json and the API explorer at /v1/docs, served offline: the Swagger UI files are embedded.
import { Elysia } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }

const ASSETS = '/v1/docs/assets'

const asset = (path: string, type: string) => () =>
  new Response(Bun.file(path), { headers: { 'content-type': type, 'cache-control': 'public, max-age=86400' } })

export const docsRoutes = (version: string) =>
  new Elysia()
    .use(openapi({
      path: '/v1/docs',
      specPath: '/v1/openapi.json',
      provider: 'swagger-ui',
      swagger: { url: '/v1/openapi.json', cdn: `${ASSETS}/swagger-ui-bundle.js`, theme: `${ASSETS}/swagger-ui.css` } as never,
      documentation: {
        info: {
          title: 'Trellis API',
          version,
          description: 'Content-feed marketplace: wallet-signed feeds and entries on private IPFS, paid entries over x402 (USDC).',
        },
        components: {
          securitySchemes: {
            walletAddress: { type: 'apiKey', in: 'header', name: 'x-wallet-address', description: 'Your 0x address.' },
            walletSignature: { type: 'apiKey', in: 'header', name: 'x-signature', description: 'personal_sign of the message from POST /v1/auth/nonce.' },
            walletMessage: { type: 'apiKey', in: 'header', name: 'x-message', description: 'That message (or its base64).' },
            walletTimestamp: { type: 'apiKey', in: 'header', name: 'x-timestamp', description: 'Unix seconds, now.' },
            adminApiKey: { type: 'apiKey', in: 'header', name: 'admin-api-key', description: 'TRELLIS_ADMIN_KEY (category administration).' },
          },
        },
      },
    }))
    .get(`${ASSETS}/swagger-ui-bundle.js`, asset(bundlePath, 'application/javascript; charset=utf-8'), { detail: { hide: true } })
    .get(`${ASSETS}/swagger-ui.css`, asset(cssPath, 'text/css; charset=utf-8'), { detail: { hide: true } })
