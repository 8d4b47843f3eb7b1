import { createHash } from "node:crypto";
import { inflateSync } from "node:zlib";
import { fileTypeFromBuffer } from "file-type";
import { ValidationError } from "../lib/errors.ts";
import type { LogoType } from "./store.ts";

/**
 * At most this many bytes: a logo is printed a few centimetres wide, and the upload has to fit in
 * a request body (256 KB, src/http/body.ts) with the rest of its form.
 */
export const MAX_LOGO_BYTES = 128 * 1024;
/** Pixels on either side: more than any printed logo needs, few enough to decode cheaply. */
export const MAX_LOGO_SIDE = 2000;
export const MIN_LOGO_SIDE = 16;

export interface CheckedLogo {
  type: LogoType;
  base64: string;
  sha256: string;
  width: number;
  height: number;
}

/**
 * A logo as uploaded, checked by its content rather than its name or declared type: a PNG or a
 * JPEG, within the size limits, its dimensions read from its own header. Anything else is refused
 * with the reason.
 */
export async function checkLogo(bytes: Uint8Array): Promise<CheckedLogo> {
  if (bytes.byteLength === 0) throw new ValidationError("logo: the file is empty");
  if (bytes.byteLength > MAX_LOGO_BYTES)
    throw new ValidationError(`logo: the file is larger than ${MAX_LOGO_BYTES / 1024} KB`);
  const detected = await fileTypeFromBuffer(bytes);
  const type = detected?.mime;
  if (type !== "image/png" && type !== "image/jpeg")
    throw new ValidationError(
      `logo must be a PNG or JPEG image; this file is ${detected ? detected.mime : "not an image this server reads"}`,
    );
  if (type === "image/png") pngDecodable(bytes);
  const size = type === "image/png" ? pngSize(bytes) : jpegSize(bytes);
  if (!size) throw new ValidationError("logo: the image is damaged (its dimensions cannot be read)");
  const { width, height } = size;
  if (width > MAX_LOGO_SIDE || height > MAX_LOGO_SIDE || width < MIN_LOGO_SIDE || height < MIN_LOGO_SIDE)
    throw new ValidationError(
      `logo must be ${MIN_LOGO_SIDE} to ${MAX_LOGO_SIDE} pixels on each side; this one is ${width}x${height}`,
    );
  return {
    type,
    base64: Buffer.from(bytes).toString("base64"),
    sha256: createHash("sha256").update(bytes).digest("hex"),
    width,
    height,
  };
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * Decodes the PNG's pixel data here, before it is stored: the PDF library decodes it again in a
 * callback where a damaged image would throw out of reach of any handler, taking the process with
 * it. So only what that decoder reads is let in: 8-bit, not interlaced, every row with a known
 * filter and the whole image present.
 */
function pngDecodable(b: Uint8Array): void {
  const damaged = new ValidationError("logo: the image is damaged (its pixel data cannot be read)");
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let header: { width: number; height: number; depth: number; colour: number; interlace: number } | null = null;
  const data: Uint8Array[] = [];
  for (let at = 8; at + 12 <= b.byteLength; ) {
    const length = view.getUint32(at);
    const kind = String.fromCharCode(...b.subarray(at + 4, at + 8));
    if (at + 12 + length > b.byteLength) throw damaged;
    const body = b.subarray(at + 8, at + 8 + length);
    if (kind === "IHDR" && length === 13)
      header = {
        width: view.getUint32(at + 8),
        height: view.getUint32(at + 12),
        depth: body[8]!,
        colour: body[9]!,
        interlace: body[12]!,
      };
    if (kind === "IDAT") data.push(body);
    if (kind === "IEND") break;
    at += 12 + length;
  }
  if (!header || data.length === 0) throw damaged;
  const channels = CHANNELS[header.colour];
  if (header.depth !== 8 || header.interlace !== 0 || channels === undefined)
    throw new ValidationError("logo: save the PNG as a plain 8-bit image, not interlaced, and upload it again");
  // The sides are checked by the caller; bound them here too so the size below stays small.
  if (header.width > MAX_LOGO_SIDE || header.height > MAX_LOGO_SIDE) return;
  const row = 1 + header.width * channels;
  let pixels: Uint8Array;
  try {
    pixels = inflateSync(Buffer.concat(data), { maxOutputLength: row * header.height + 1 });
  } catch {
    throw damaged;
  }
  if (pixels.byteLength !== row * header.height) throw damaged;
  for (let y = 0; y < header.height; y++) if (pixels[y * row]! > 4) throw damaged;
}

/** Width and height from the IHDR chunk, which a PNG must start with. */
function pngSize(b: Uint8Array): { width: number; height: number } | null {
  if (b.byteLength < 24 || String.fromCharCode(...b.subarray(12, 16)) !== "IHDR") return null;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** Width and height from the first start-of-frame marker, walking the JPEG's segments. */
function jpegSize(b: Uint8Array): { width: number; height: number } | null {
  let i = 2;
  while (i + 9 < b.byteLength) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    const length = (b[i + 2]! << 8) | b[i + 3]!;
    // SOF0..SOF15 carry the frame's size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { height: (b[i + 5]! << 8) | b[i + 6]!, width: (b[i + 7]! << 8) | b[i + 8]! };
    if (length < 2) return null;
    i += 2 + length;
  }
  return null;
}
