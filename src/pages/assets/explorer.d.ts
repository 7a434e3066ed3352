// explorer.js runs in the browser; the server imports its text (routes/docs.ts).
declare const text: string
export default text
