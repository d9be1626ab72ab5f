import { contract, namedSchemas } from '@pigeon/contract';
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

/** What the document covers: the built parts only, one per tag. */
const DESCRIPTION = [
  'Pigeon, a self-hostable email platform. This reference lists every endpoint this server runs:',
  'transactional sending (`POST /v1/send`, templates, sender domains with DKIM), event tracking',
  '(`POST /v1/track`), contacts with custom data (CSV import, bulk jobs), segments, campaigns, workflows',
  'with signed webhooks, the activity feed, accounts, projects and members.',
  '',
  'Authenticate with `Authorization: Bearer <key>`: the secret key (`sk_…`) everywhere, the public key',
  '(`pk_…`) on `POST /v1/track` only. Errors share one envelope (`ErrorEnvelope`, codes in `ErrorCode`).',
  '`POST /v1/send` and `POST /v1/track` take an `Idempotency-Key`.',
  '',
  'This document is OpenAPI 3.1 (`/openapi.json`); `/openapi-3.0.json` is the same API as OpenAPI 3.0.3',
  'for generators that read only 3.0.',
].join('\n');

/**
 * Both documents, built on the first request for either: the generator (zod-to-json-schema,
 * openapi3-ts) and the documents themselves stay out of every process that is never asked.
 */
async function openApiDocuments(publicUrl: string) {
  const { buildOpenApiDocument, toOpenApi30 } = await import('@pigeon/contract/openapi');
  const v31 = buildOpenApiDocument(contract, namedSchemas, {
    title: 'Pigeon API',
    version: VERSION,
    description: DESCRIPTION,
    serverUrl: publicUrl,
  });
  return { v31: JSON.stringify(v31), v30: JSON.stringify(toOpenApi30(v31)) };
}

/**
 * `GET /openapi.json` (3.1), `GET /openapi-3.0.json` (the 3.0.3 rendering) and the API reference page
 * at `/docs/`, served from local assets only.
 */
export function docsRouter(publicUrl: string): Router {
  let documents: ReturnType<typeof openApiDocuments> | undefined;
  const send = (version: 'v31' | 'v30') => async (_req: express.Request, res: express.Response) => {
    documents ??= openApiDocuments(publicUrl);
    res.type('json').send((await documents)[version]);
  };
  const router = express.Router();
  router.get('/openapi.json', send('v31'));
  router.get('/openapi-3.0.json', send('v30'));
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
