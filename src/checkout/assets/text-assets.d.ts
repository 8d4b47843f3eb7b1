// Browser scripts are embedded as text (`import x from "./a.client.js" with { type: "text" }`),
// never executed on the server.
declare module "*.client.js" {
  const text: string;
  export default text;
}
