// Starts Swagger UI on the API docs page. A file of its own (not an inline script) so the
// page's Content-Security-Policy can forbid inline scripts. The document's URL comes from the
// page (data-openapi-url on the #swagger-ui element).
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-openapi-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    docExpansion: "list",
    defaultModelsExpandDepth: -1,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
