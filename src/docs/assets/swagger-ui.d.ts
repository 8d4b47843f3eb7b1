// Swagger UI's prebuilt files, embedded in the binary (`with { type: "file" }`: their path there).
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
