import { definePage } from '../../kit/pages.js';

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

/** A topic mail's link offers that topic first, and everything as the second choice. */
definePage(
  'unsubscribe',
  `<% layout('@layout') %>
<% if (it.topicName) { %>
<h1>Unsubscribe from <%= it.topicName %>?</h1>
<p><%= it.email %> will stop getting <strong><%= it.topicName %></strong> from <strong><%= it.projectName %></strong>.</p>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="unsubscribe">
  <button type="submit">Unsubscribe from <%= it.topicName %></button>
</form>
<% if (it.subscribed) { %>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="unsubscribe_all">
  <p class="muted">Or stop all marketing email from <%= it.projectName %>:</p>
  <button type="submit" class="secondary">Unsubscribe from all</button>
</form>
<% } %>
<% } else { %>
<h1>Unsubscribe from <%= it.projectName %>?</h1>
<p><%= it.email %> will stop getting marketing email from <strong><%= it.projectName %></strong>.</p>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="unsubscribe">
  <button type="submit">Unsubscribe</button>
</form>
<% } %>`,
);

definePage(
  'topic-left',
  `<% layout('@layout') %>
<h1>You are unsubscribed from <%= it.topicName %></h1>
<p><%= it.email %> will no longer get <strong><%= it.topicName %></strong> from <strong><%= it.projectName %></strong>.</p>
<p><a href="<%= it.manageUrl %>">Choose what else you get</a></p>`,
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

/**
 * The preference page: the public topics as checkboxes (each listed again in `shown`, so a topic
 * made after the page was opened is left alone), then subscribing or leaving everything.
 */
definePage(
  'manage',
  `<% layout('@layout') %>
<style>.topic { display: flex; gap: .6rem; align-items: flex-start; margin: 0 0 .8rem; font-weight: normal; } .topic input { width: auto; margin: .3rem 0 0; }</style>
<h1>Email preferences</h1>
<% if (it.saved) { %><p role="status"><strong>Your choices are saved.</strong></p><% } %>
<p><%= it.email %> is <strong><%= it.subscribed ? 'subscribed' : 'not subscribed' %></strong> to marketing email from <strong><%= it.projectName %></strong>.</p>
<% if (it.topics.length) { %>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="save">
  <% it.topics.forEach(function (t) { %>
  <input type="hidden" name="shown" value="<%= t.topic_id %>">
  <label class="topic"><input type="checkbox" name="topic" value="<%= t.topic_id %>"<%= t.subscribed ? ' checked' : '' %>>
    <span><%= t.name %><% if (t.description) { %><br><span class="muted"><%= t.description %></span><% } %></span></label>
  <% }) %>
  <% if (!it.subscribed) { %><p class="muted">You are unsubscribed from everything: subscribe again below to get the topics you choose.</p><% } %>
  <button type="submit">Save my choices</button>
</form>
<% } %>
<form method="post" action="<%= it.action %>">
  <input type="hidden" name="action" value="<%= it.subscribed ? 'unsubscribe' : 'subscribe' %>">
  <p></p>
  <button type="submit" class="<%= it.topics.length ? 'secondary' : '' %>"><%= it.subscribed ? (it.topics.length ? 'Unsubscribe from all' : 'Unsubscribe') : 'Subscribe' %></button>
</form>`,
);

definePage(
  'link-error',
  `<% layout('@layout') %>
<h1><%= it.title %></h1>
<p><%= it.message %></p>`,
);
