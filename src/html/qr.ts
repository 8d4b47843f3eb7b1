import QRCode from "qrcode";

/** An SVG QR code; margin 1 keeps the quiet zone while fitting small widgets. */
export function qrSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: "svg", margin: 1, errorCorrectionLevel: "M" });
}
