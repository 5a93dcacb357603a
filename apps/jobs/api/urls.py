from django.urls import path

from apps.jobs.api import views

urlpatterns = [
    path("jobs", views.JobListApi.as_view(), name="jobs"),
    path("jobs/<uuid:job_id>", views.JobDetailApi.as_view(), name="job-detail"),
]
