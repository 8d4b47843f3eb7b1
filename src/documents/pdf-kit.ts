import regularPath from "@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf" with { type: "file" };
import semiboldPath from "@expo-google-fonts/inter/600SemiBold/Inter_600SemiBold.ttf" with { type: "file" };
import QRCode from "qrcode";
import type { DocumentCommon, DocumentMerchant } from "./data.ts";
import { type Paper, usdc } from "./format.ts";

/**
 * What the invoice and receipt PDFs share: a page with Inter embedded (shipped in the binary:
 * `with { type: "file" }` makes `bun build --compile` carry the font files), the merchant's
 * block, tables, a QR code, and bytes that depend only on what is drawn: the info dates come from
 * the payment and PDFKit derives the document id from them, so the same payment gives the same file.
 */
export type Doc = PDFKit.PDFDocument;

export const MARGIN = 50;
export const INK = "#111827";
export const MUTED = "#6b7280";
export const RULE = "#d1d5db";

let fonts: Promise<{ regular: Uint8Array; semibold: Uint8Array }> | undefined;
const loadFonts = () =>
  (fonts ??= Promise.all([Bun.file(regularPath).bytes(), Bun.file(semiboldPath).bytes()]).then(
    ([regular, semibold]) => ({ regular, semibold }),
  ));

/** A new document, its first page begun, and a promise of its bytes once `doc.end()` is called. */
export async function newDocument(opts: {
  paper: Paper;
  title: string;
  author: string;
  /** Fixed times from the payment, never the clock. */
  createdAt: number;
  modifiedAt: number;
}): Promise<{ doc: Doc; bytes: Promise<Uint8Array<ArrayBuffer>> }> {
  const { regular, semibold } = await loadFonts();
  // Loaded on the first document, not at start-up: the PDF library and its font engine are most of a
  // cold start's module loading, and most servers render a document long after they start, if ever.
  const { default: PDFDocument } = await import("pdfkit");
  const doc = new PDFDocument({
    size: opts.paper === "letter" ? "LETTER" : "A4",
    margin: MARGIN,
    // A Buffer, not a name: PDFKit would otherwise load its Helvetica metrics from a file beside it.
    font: Buffer.from(regular) as unknown as string,
    lang: "en",
    displayTitle: true,
    bufferPages: true,
    info: {
      Title: opts.title,
      Author: opts.author,
      Creator: "Stablegate",
      Producer: "Stablegate",
      CreationDate: new Date(opts.createdAt),
      ModDate: new Date(opts.modifiedAt),
    },
  });
  doc.registerFont("regular", Buffer.from(regular));
  doc.registerFont("semibold", Buffer.from(semibold));
  const chunks: Uint8Array[] = [];
  doc.on("data", (chunk: Uint8Array) => chunks.push(chunk));
  const bytes = new Promise<Uint8Array<ArrayBuffer>>((resolve, reject) => {
    doc.on("end", () => resolve(new Uint8Array(Buffer.concat(chunks))));
    doc.on("error", reject);
  });
  doc.font("regular").fillColor(INK);
  return { doc, bytes };
}

export const contentWidth = (doc: Doc) => doc.page.width - 2 * MARGIN;

/** A small grey label above its value. */
export function label(doc: Doc, text: string, x: number, y: number, width: number): number {
  doc.font("regular").fontSize(8).fillColor(MUTED).text(text.toUpperCase(), x, y, { width, characterSpacing: 0.5 });
  return doc.y;
}

/** The merchant's logo (if any), name, address, tax id and support email, from (x, y); returns the bottom. */
export function merchantBlock(doc: Doc, m: DocumentMerchant, x: number, y: number, width: number): number {
  let top = y;
  if (m.logo) {
    try {
      doc.image(Buffer.from(m.logo.bytes), x, top, { fit: [160, 56] });
      top += 64;
    } catch {
      // Checked at upload (src/documents/logo.ts); a logo that still cannot be read leaves the name alone.
    }
  }
  doc.font("semibold").fontSize(13).fillColor(INK).text(m.name, x, top, { width });
  doc.font("regular").fontSize(9.5).fillColor(INK);
  for (const line of m.addressLines) doc.text(line, { width });
  if (m.taxId) doc.text(`Tax ID: ${m.taxId}`, { width });
  if (m.supportEmail) doc.fillColor(MUTED).text(m.supportEmail, { width, link: `mailto:${m.supportEmail}` });
  return doc.y;
}

/** Key and value pairs, right-aligned in a column: invoice number, dates. */
export function factsBlock(doc: Doc, facts: Array<[string, string]>, x: number, y: number, width: number): number {
  doc.y = y;
  for (const [key, value] of facts) {
    const top = doc.y;
    doc
      .font("regular")
      .fontSize(9)
      .fillColor(MUTED)
      .text(key, x, top, { width: width / 2 });
    doc
      .font("semibold")
      .fontSize(9)
      .fillColor(INK)
      .text(value, x + width / 2, top, { width: width / 2, align: "right" });
    doc.y = Math.max(doc.y, top + 14);
  }
  return doc.y;
}

export interface Column {
  title: string;
  width: number;
  align?: "left" | "right";
}

/** A table with a header row and a rule under each row; starts a new page when a row would not fit. */
/** A cell: `small` for long unbreakable text (a transaction hash) that must stay on one line. */
export interface Cell {
  text: string;
  link?: string;
  small?: boolean;
}

export function table(doc: Doc, columns: Column[], rows: Cell[][], y: number) {
  const x0 = MARGIN;
  const widths = scaled(columns, contentWidth(doc));
  const header = (top: number) => {
    let x = x0;
    columns.forEach((c, i) => {
      doc
        .font("semibold")
        .fontSize(8)
        .fillColor(MUTED)
        .text(c.title.toUpperCase(), x, top, {
          width: widths[i]! - 6,
          align: c.align ?? "left",
        });
      x += widths[i]!;
    });
    const bottom = top + 14;
    doc
      .moveTo(x0, bottom)
      .lineTo(x0 + contentWidth(doc), bottom)
      .lineWidth(0.7)
      .strokeColor(RULE)
      .stroke();
    return bottom + 6;
  };
  let top = header(y);
  for (const row of rows) {
    const height = Math.max(
      ...row.map((cell, i) =>
        doc
          .font("regular")
          .fontSize(cell.small ? 7.5 : 9.5)
          .heightOfString(cell.text, { width: widths[i]! - 6 }),
      ),
    );
    if (top + height > doc.page.height - MARGIN - 40) {
      doc.addPage();
      top = header(MARGIN);
    }
    let x = x0;
    row.forEach((cell, i) => {
      doc
        .font("regular")
        .fontSize(cell.small ? 7.5 : 9.5)
        .fillColor(cell.link ? "#1d4ed8" : INK);
      doc.text(cell.text, x, top, { width: widths[i]! - 6, align: columns[i]!.align ?? "left", link: cell.link });
      x += widths[i]!;
    });
    top += height + 6;
    doc
      .moveTo(x0, top - 3)
      .lineTo(x0 + contentWidth(doc), top - 3)
      .lineWidth(0.4)
      .strokeColor(RULE)
      .stroke();
  }
  return top;
}

/** Totals under a table, right-aligned: the last one (amount due, amount paid) stands out. */
export function totals(doc: Doc, rows: Array<[string, string]>, y: number, strongLast = true): number {
  const width = 240;
  const x = MARGIN + contentWidth(doc) - width;
  let top = y + 4;
  rows.forEach(([key, value], i) => {
    const strong = strongLast && i === rows.length - 1;
    doc
      .font(strong ? "semibold" : "regular")
      .fontSize(strong ? 12 : 9.5)
      .fillColor(INK);
    doc.text(key, x, top, { width: width / 2 });
    doc.text(value, x + width / 2, top, { width: width / 2 - 6, align: "right" });
    top = doc.y + 4;
  });
  return top;
}

/** A QR code of `text`, drawn as squares (crisp at any zoom, no image), `size` points wide. */
export function qr(doc: Doc, text: string, x: number, y: number, size: number): void {
  const code = QRCode.create(text, { errorCorrectionLevel: "M" });
  const n = code.modules.size;
  const cell = size / (n + 2);
  doc.save().rect(x, y, size, size).fill("#ffffff");
  for (let r = 0; r < n; r++)
    for (let c = 0; c < n; c++)
      if (code.modules.get(r, c)) doc.rect(x + (c + 1) * cell, y + (r + 1) * cell, cell, cell);
  doc.fill(INK).restore();
}

/** The small print at the bottom of every page. */
export function footer(doc: Doc, text: string): void {
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    const bottom = doc.page.height - MARGIN + 10;
    doc.page.margins.bottom = 0;
    doc
      .font("regular")
      .fontSize(7.5)
      .fillColor(MUTED)
      .text(text, MARGIN, bottom, {
        width: contentWidth(doc),
        align: "center",
        lineBreak: false,
      });
  }
}

function scaled(columns: Column[], total: number): number[] {
  const sum = columns.reduce((s, c) => s + c.width, 0);
  return columns.map((c) => (c.width / sum) * total);
}

/**
 * How both documents open: the title and its facts on the right, the merchant on the left, the
 * customer under `partyLabel` ("Bill to", "Received from"), the description and the line items.
 * Returns where the page goes on.
 */
export function documentOpening(
  doc: Doc,
  data: DocumentCommon,
  opts: { title: string; facts: Array<[string, string]>; partyLabel: string },
): number {
  const width = contentWidth(doc);
  const right = MARGIN + width * 0.55;
  const rightWidth = width * 0.45;
  doc
    .font("semibold")
    .fontSize(22)
    .fillColor(INK)
    .text(opts.title, right, MARGIN, { width: rightWidth, align: "right" });
  const factsEnd = factsBlock(doc, opts.facts, right, MARGIN + 34, rightWidth);
  const merchantEnd = merchantBlock(doc, data.merchant, MARGIN, MARGIN, width * 0.5);

  let y = Math.max(factsEnd, merchantEnd) + 24;
  if (data.customer.name || data.customer.email) {
    label(doc, opts.partyLabel, MARGIN, y, width / 2);
    doc.font("semibold").fontSize(10.5).fillColor(INK);
    if (data.customer.name) doc.text(data.customer.name, { width: width / 2 });
    doc.font("regular").fontSize(9.5);
    if (data.customer.email) doc.text(data.customer.email, { width: width / 2 });
    y = doc.y + 18;
  }
  if (data.description) {
    doc.font("regular").fontSize(10).fillColor(INK).text(data.description, MARGIN, y, { width });
    y = doc.y + 14;
  }
  return table(
    doc,
    [
      { title: "Description", width: 52 },
      { title: "Qty", width: 8, align: "right" },
      { title: "Unit price", width: 20, align: "right" },
      { title: "Amount", width: 20, align: "right" },
    ],
    data.lines.map((line) => [
      { text: line.description },
      { text: String(line.quantity) },
      { text: usdc(line.unitAmount) },
      { text: usdc(line.amount) },
    ]),
    y,
  );
}
