// The frame of every studio page: the site's frame with the studio's own script and style, the studio's sections,
// and the session's CSRF token for studio.js (the page is private: the server sends it only to the signed-in wallet's
// own browser, and no other site may read or frame it).
import { html, type Html } from '../html.ts'
import { page } from '../layout.ts'
import { shortAddress } from '../format.ts'

export const STUDIO_ASSETS = ['studio.css', 'studio.js', 'studio-page.js'] as const

export interface StudioFrame {
  title: string
  network: string
  assetVersion: string
  /** The signed-in wallet's address, and its session's CSRF token; none on the sign-in page. */
  session?: { address: string; csrf: string; walletId: string | null }
  /** Which section of the studio this page is (its link is marked current). */
  section?: 'home' | 'webhooks' | 'profile'
}

const SECTIONS = [
  ['home', '/studio', 'Feeds and sales'],
  ['webhooks', '/studio/webhooks', 'Webhooks'],
  ['profile', '/studio/profile', 'Profile'],
] as const

function studioNav(frame: StudioFrame): Html {
  if (!frame.session) return html``
  return html`<nav class="studio-nav" aria-label="Studio">${SECTIONS.map(
    ([key, href, label]) => html`<a href="${href}"${frame.section === key ? html` aria-current="page"` : ''}>${label}</a>`,
  )}<span class="who" title="${frame.session.address}">Studio of ${shortAddress(frame.session.address)}</span>
<button type="button" id="studio-sign-out">Sign out</button></nav>`
}

export function studioPage(frame: StudioFrame, main: Html): string {
  const data = frame.session
    ? { kind: 'studio', csrf: frame.session.csrf, address: frame.session.address, wallet_id: frame.session.walletId }
    : { kind: 'studio-sign-in' }
  return page(
    { title: `${frame.title} · Studio`, network: frame.network, assetVersion: frame.assetVersion, extraAssets: STUDIO_ASSETS, data },
    html`<div class="studio">${studioNav(frame)}${main}</div>`,
  )
}

/** The page a browser without a studio session gets at any studio address. */
export function signInPage(frame: StudioFrame): string {
  return studioPage(
    { ...frame, session: undefined },
    html`<section class="intro studio-sign-in">
<h1>Trellis Studio</h1>
<p>Publish feeds and entries, set prices and passes, make access links, try webhooks and see what sold.</p>
<p>Sign in once with your wallet: it signs a message (no transaction, nothing is paid). The studio session lasts
12 hours, works only on this site's pages, and ends when you sign out.</p>
<p><button type="button" class="primary" id="studio-sign-in">Sign in to the studio with your wallet</button></p>
<p class="status" id="studio-status" role="status"></p>
</section>`,
  )
}
