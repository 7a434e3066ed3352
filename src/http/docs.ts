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
            walletSignature: { type: 'apiKey', in: 'header', name: 'x-signature', description: 'Sign the message of POST /v1/auth/nonce; also send x-wallet-address, x-message and x-timestamp.' },
          },
        },
      },
    }))
    .get(`${ASSETS}/swagger-ui-bundle.js`, asset(bundlePath, 'application/javascript; charset=utf-8'), { detail: { hide: true } })
    .get(`${ASSETS}/swagger-ui.css`, asset(cssPath, 'text/css; charset=utf-8'), { detail: { hide: true } })
