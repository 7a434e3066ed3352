// Trellis pages: what was bought or is free, shown in the page (loaded before trellis.js, which calls on it; both are
// classic scripts of this server, the only ones the Content-Security-Policy allows).
'use strict'

/** A pass bought: until when it runs, and how to read with it (a session stands for the wallet that paid). */
function showPass(pass) {
  const place = $('bought')
  place.hidden = false
  const line = document.createElement('p')
  line.id = 'pass-bought'
  line.textContent = `Your pass runs until ${new Date(pass.expires_at * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC.`
  const read = document.createElement('a')
  read.href = `/feeds/${pass.feed_id}`
  read.textContent = signedInAs() ? 'Read the feed' : 'Sign in (above) and read the feed'
  place.replaceChildren(line, read)
}

/** Puts the content at `url` into `place` the way its type is read: text as text, media in a player, the rest as a download. */
async function showContent(place, url, mimeType, title) {
  const type = mimeType.toLowerCase()
  place.hidden = false
  place.replaceChildren()
  let view
  if (type.startsWith('image/')) {
    view = document.createElement('img')
    view.alt = title
  } else if (type.startsWith('audio/') || type.startsWith('video/')) {
    view = document.createElement(type.startsWith('audio/') ? 'audio' : 'video')
    view.controls = true
  } else if ((type.startsWith('text/') && !type.startsWith('text/html')) || /^application\/([\w.+-]*\+)?json/.test(type)) {
    // JSON pretty-printed in monospace; any other text as text, in the page's own type (never parsed as markup).
    const json = type.includes('json')
    view = document.createElement(json ? 'pre' : 'div')
    const text = await (await fetch(url)).text()
    view.textContent = json ? pretty(text) : text
  }
  if (view) {
    if (view.tagName !== 'PRE' && view.tagName !== 'DIV') view.src = url
    view.className = view.tagName === 'DIV' ? 'content text' : 'content'
    place.append(view)
  }
  const link = document.createElement('a')
  link.href = url
  link.textContent = view ? 'Download' : 'Open the content'
  if (view || !type.startsWith('application/pdf')) link.download = title
  link.className = 'download'
  place.append(link)
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

function startEntry() {
  // Text content is fetched and shown as text: never parsed as markup.
  for (const place of document.querySelectorAll('[data-text-src]')) {
    fetch(place.dataset.textSrc)
      .then((response) => (response.ok ? response.text() : Promise.reject(new Error(`HTTP ${response.status}`))))
      .then((text) => (place.textContent = place.dataset.json === '1' ? pretty(text) : text))
      .catch((error) => (place.textContent = `The content could not be loaded (${error.message}).`))
  }
}
