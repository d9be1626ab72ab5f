import { engagementScenario } from '../lib/engagement-scenario.mjs';

export default engagementScenario('click', {
  description:
    'GET the click redirect (302) of one of 5,000 tracked emails per request (a counted click or one folded by the 60 s burst rule)',
  expectStatus: 302, // the redirect to the original link is the right answer
});
