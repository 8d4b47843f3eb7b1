/** A PDF as a download named `name`.pdf; the name is made of the invoice number or id, so only safe characters stay. */
export function pdfResponse(bytes: Uint8Array<ArrayBuffer>, name: string): Response {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, "-").slice(0, 80);
  return new Response(bytes, {
    headers: {
      "content-type": "application/pdf",
      "content-disposition": `inline; filename="${safe}.pdf"`,
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
    },
  });
}
