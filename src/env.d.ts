declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.html" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*.ttf" {
  /** With `{ type: "file" }`: the path of the file, inside the binary once compiled. */
  const path: string;
  export default path;
}
