// The pages' scripts and style, embedded in the binary, each served under a name that changes with its text.
import script from './assets/trellis.js' with { type: 'text' }
import content from './assets/content.js' with { type: 'text' }
import style from './assets/trellis.css' with { type: 'text' }
import favicon from './assets/favicon.svg' with { type: 'text' }
import studioScript from './assets/studio.js' with { type: 'text' }
import studioStyle from './assets/studio.css' with { type: 'text' }
import studioPage from './assets/studio-page.js' with { type: 'text' }

export const ASSETS = {
  'trellis.js': { text: script, type: 'text/javascript; charset=utf-8' },
  'content.js': { text: content, type: 'text/javascript; charset=utf-8' },
  'trellis.css': { text: style, type: 'text/css; charset=utf-8' },
  'favicon.svg': { text: favicon, type: 'image/svg+xml' },
  'studio.js': { text: studioScript, type: 'text/javascript; charset=utf-8' },
  'studio.css': { text: studioStyle, type: 'text/css; charset=utf-8' },
  'studio-page.js': { text: studioPage, type: 'text/javascript; charset=utf-8' },
}

/** Changes with the assets' text: pages name it, so a browser never keeps an old script for a new page. */
export const ASSET_VERSION = Bun.hash(script + content + style + favicon + studioScript + studioStyle + studioPage).toString(36)
