from django.urls import path

from knowledge import api, views

urlpatterns = [
    path("documents/", views.documents_page, name="documents"),
    path("documents/list/", views.document_list, name="document-list"),
    path("documents/<str:document_id>/", views.document_page, name="document"),
    path("documents/<str:document_id>/image/", views.document_image, name="document-image"),
    path("documents/<str:document_id>/delete/", views.document_delete, name="document-delete"),
    path("api/documents/", api.documents, name="api-documents"),
    path("api/documents/<str:document_id>/", api.document_detail, name="api-document"),
]
