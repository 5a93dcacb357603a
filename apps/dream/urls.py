from django.urls import path

from apps.dream import api

prefix = "subjects/<str:external_id>"
urlpatterns = [
    path(f"{prefix}/dream", api.DreamApi.as_view(), name="dream"),
    path(f"{prefix}/dream/merges", api.DreamMergeListApi.as_view(), name="dream-merges"),
]
