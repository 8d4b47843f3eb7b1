// The renderer's prebuilt browser bundle, embedded as text (`with { type: "text" }`), never run on the server.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const text: string;
  export default text;
}
