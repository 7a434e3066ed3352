// studio-page.js runs in the browser; the server imports its text (pages/assets.ts).
declare const text: string
export default text
