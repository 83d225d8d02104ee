// The dashboard's pages, in one list: the router and the route-wide browser checks read it.
import { auditPages } from './audit-log';
import { brandingPages } from './branding';
import { domainPages } from './domains';
import { emailDetailPages } from './email';
import { emailPages } from './emails';
import { inboundPages } from './inbound';
import { keyPages } from './keys';
import { memberPages } from './members';
import { overviewPages } from './overview';
import { dashboardRouter, type PageDeclaration } from './page';
import { sessionPages } from './sessions';
import { signInPages } from './sign-in';
import { suppressionPages } from './suppressions';
import { templatePages } from './templates';
import { webhookEndpointPages } from './webhook';
import { webhookPages } from './webhooks';

export const DASHBOARD_PAGES: PageDeclaration[] = [
  ...signInPages,
  ...overviewPages,
  ...emailPages,
  ...emailDetailPages,
  ...inboundPages,
  ...templatePages,
  ...domainPages,
  ...suppressionPages,
  ...webhookPages,
  ...webhookEndpointPages,
  ...keyPages,
  ...brandingPages,
  ...memberPages,
  ...sessionPages,
  ...auditPages,
];

export const dashboardRoutes = dashboardRouter(DASHBOARD_PAGES);
