import { definePage } from '../../http/pages.js';

/** The subscription pages. Plain HTML forms: they work without JavaScript. */
definePage(
  'subscription-done',
  `<% layout('@layout') %>
<h1><%= it.subscribed ? 'You are subscribed' : 'You are unsubscribed' %></h1>
<p><%= it.email %> <%= it.subscribed ? 'will get' : 'will no longer get' %> marketing email from <strong><%= it.projectName %></strong>.</p>
<% if (!it.subscribed) { %><p class="muted">You may still get messages about your account or orders you place.</p><% } %>
<form method="post" action="<%= it.manageAction %>">
  <input type="hidden" name="action" value="<%= it.subscribed ? 'unsubscribe' : 'subscribe' %>">
  <button type="submit" class="secondary"><%= it.subscribed ? 'Unsubscribe' : 'Subscribe again' %></button>
</form>`,
);

definePage(
  'unsubscribe',
  `<% layout('@layout') %>
<h1>Unsubscribe from <%= it.projectName %>?</h1>
<p><%= it.email %> will stop getting marketing email from <strong><%= it.projectName %></strong>.</p>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="unsubscribe">
  <button type="submit">Unsubscribe</button>
</form>`,
);

/** The subscribe link's page: nothing changes until the person presses the button (link scanners only GET). */
definePage(
  'subscribe',
  `<% layout('@layout') %>
<% if (it.subscribed) { %>
<h1>You are already subscribed</h1>
<p><%= it.email %> gets marketing email from <strong><%= it.projectName %></strong>.</p>
<% } else { %>
<h1>Subscribe to <%= it.projectName %>?</h1>
<p>Confirm that <%= it.email %> should get marketing email from <strong><%= it.projectName %></strong>.</p>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="subscribe">
  <button type="submit">Yes, subscribe me</button>
</form>
<% } %>`,
);

definePage(
  'manage',
  `<% layout('@layout') %>
<h1>Email preferences</h1>
<p><%= it.email %> is <strong><%= it.subscribed ? 'subscribed' : 'not subscribed' %></strong> to marketing email from <strong><%= it.projectName %></strong>.</p>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="<%= it.subscribed ? 'unsubscribe' : 'subscribe' %>">
  <button type="submit"><%= it.subscribed ? 'Unsubscribe' : 'Subscribe' %></button>
</form>`,
);

definePage(
  'link-error',
  `<% layout('@layout') %>
<h1><%= it.title %></h1>
<p><%= it.message %></p>`,
);
