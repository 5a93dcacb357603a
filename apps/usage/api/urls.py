from django.urls import path

from apps.usage.api import views

urlpatterns = [path("usage", views.UsageApi.as_view(), name="usage")]
