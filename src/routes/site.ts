// The website a person reads, as one plugin: the pages (home, feeds, entries and their paywalls, creators, boards),
// the storefront's listings and search, what crawlers ask for, and the creators' studio; and the feed passes, as one more.
import { Elysia } from 'elysia'
import type { Services } from './services.ts'
import { pageRoutes } from './pages.ts'
import { browsePageRoutes } from './browse-pages.ts'
import { crawlerRoutes } from './crawlers.ts'
import { studioPageRoutes } from './studio-pages.ts'
import { passRoutes } from './passes.ts'
import { passPurchaseRoutes } from './pass-purchases.ts'
import { passFeedRoutes } from './pass-feeds.ts'

export const siteRoutes = (s: Services) =>
  new Elysia({ name: 'site' }).use(pageRoutes(s)).use(browsePageRoutes(s)).use(crawlerRoutes(s)).use(studioPageRoutes(s))

/** A feed's pass: its offer, buying it (x402), the passes held, and a holder's private feed URL. */
export const passPlugins = (s: Services) =>
  new Elysia({ name: 'passes' }).use(passRoutes(s)).use(passPurchaseRoutes(s)).use(passFeedRoutes(s))
