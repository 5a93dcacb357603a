from django.urls import path

from apps.consent.api import views

urlpatterns = [
    path("subjects/<str:external_id>/consent", views.SubjectConsentApi.as_view(), name="subject-consent"),
]
