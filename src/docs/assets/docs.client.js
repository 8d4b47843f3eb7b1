// Renders the reference from the document the page names (GET /openapi.json) with Swagger UI,
// whose bundle the page loads just before this file.
(() => {
  const root = document.getElementById("docs");
  if (!root || typeof window.SwaggerUIBundle !== "function") return;
  window.SwaggerUIBundle({
    url: root.dataset.openapi,
    domNode: root,
    deepLinking: true,
    // Operation ids (createPayment...) beside each route, as the generated client names them.
    displayOperationId: true,
    // A key typed into "Authorize" lives only in this tab, never in localStorage.
    persistAuthorization: false,
  });
})();
