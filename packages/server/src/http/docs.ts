import { contract, namedSchemas } from '@pigeon/contract';
import { buildOpenApiDocument } from '@pigeon/contract/openapi';
import express, { type Router } from 'express';
// Only the assets' directory: the package's main module loads the 1.4 MB browser bundle (~40 MB of
// RSS in every process, workers included) for nothing.
import getAbsoluteFSPath from 'swagger-ui-dist/absolute-path.js';
import { VERSION } from '../version.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Pigeon API reference</title>
  <link rel="stylesheet" href="./assets/swagger-ui.css">
</head>
<body>
  <div id="api"></div>
  <script src="./assets/swagger-ui-bundle.js"></script>
  <script src="./init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '../openapi.json', dom_id: '#api', deepLinking: true });`;

export function openApiDocument(publicUrl: string) {
  return buildOpenApiDocument(contract, namedSchemas, {
    title: 'Pigeon API',
    version: VERSION,
    description: 'Self-hostable email platform: transactional sending, events, contacts, campaigns and workflows.',
    serverUrl: publicUrl,
  });
}

/** `GET /openapi.json` and the API reference page at `/docs/`, served from local assets only. */
export function docsRouter(publicUrl: string): Router {
  const document = openApiDocument(publicUrl);
  const router = express.Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  router.get('/docs', (req, res, next) => (req.path === '/docs' ? res.redirect(301, '/docs/') : next()));
  router.get('/docs/', (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('js').send(INIT);
  });
  router.use('/docs/assets', express.static(getAbsoluteFSPath(), { index: false }));
  return router;
}
