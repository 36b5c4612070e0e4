from django.urls import path

from chat import api, attachments, export, run_events, sidebar, views

urlpatterns = [
    path("", views.home, name="home"),
    path("c/new/", views.conversation_new, name="conversation-new"),
    path("attachments/", attachments.attachment_upload, name="attachment-upload"),
    path("c/<str:conversation_id>/", views.conversation_page, name="conversation"),
    path("c/<str:conversation_id>/messages/", views.conversation_post, name="conversation-post"),
    path("c/<str:conversation_id>/rename/", views.conversation_rename, name="conversation-rename"),
    path("c/<str:conversation_id>/delete/", views.conversation_delete, name="conversation-delete"),
    path("c/<str:conversation_id>/totals/", views.conversation_totals, name="conversation-totals"),
    path("c/<str:conversation_id>/model/", views.conversation_model, name="conversation-model"),
    path("r/<str:run_id>/regenerate/", views.run_regenerate, name="run-regenerate"),
    path("c/<str:conversation_id>/edit/", views.conversation_edit, name="conversation-edit"),
    path("api/conversations/", api.conversations, name="api-conversations"),
    path(
        "api/conversations/<str:conversation_id>/",
        api.conversation_detail,
        name="api-conversation",
    ),
    path(
        "api/conversations/<str:conversation_id>/messages/",
        api.conversation_messages,
        name="api-conversation-messages",
    ),
    path("api/skills/", api.skill_list, name="api-skills"),
    path("api/runs/<str:run_id>/", api.run_detail, name="api-run"),
    path("api/runs/<str:run_id>/events/", run_events.run_events, name="api-run-events"),
    path("api/runs/<str:run_id>/cancel/", api.run_cancel, name="api-run-cancel"),
    path("api/runs/<str:run_id>/continue/", api.run_continue, name="api-run-continue"),
    path("api/runs/<str:run_id>/approve/", api.run_approve, name="api-run-approve"),
    path("api/runs/<str:run_id>/deny/", api.run_deny, name="api-run-deny"),
    path("sidebar/", sidebar.conversation_list, name="sidebar-list"),
    path("sidebar/<uuid:conversation_id>/", sidebar.item, name="sidebar-item"),
    path("sidebar/<uuid:conversation_id>/rename/", sidebar.rename, name="sidebar-rename"),
    path("sidebar/<uuid:conversation_id>/delete/", sidebar.delete, name="sidebar-delete"),
    path("sidebar/<uuid:conversation_id>/restore/", sidebar.restore, name="sidebar-restore"),
    path("c/<uuid:conversation_id>/export.md", export.markdown, name="conversation-export-md"),
    path("c/<uuid:conversation_id>/export.json", export.as_json, name="conversation-export-json"),
]
